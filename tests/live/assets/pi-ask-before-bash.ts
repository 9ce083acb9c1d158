/**
 * tma live suite: pi has no permission prompt of its own, so this extension asks
 * "Allow bash command?" before every bash tool call. The prompt is extension UI drawn
 * while pi's own "Working..." row stays up: tma must read it as working, never blocked.
 */
export default function (pi: any) {
	pi.on("tool_call", async (event: any, ctx: any) => {
		if (event.toolName !== "bash" || !ctx.hasUI) return undefined;
		const choice = await ctx.ui.select(`Allow bash command?\n\n  ${event.input?.command}\n`, ["Allow", "Deny"]);
		if (choice !== "Allow") return { block: true, reason: "denied by the tma live suite" };
		return undefined;
	});
}
