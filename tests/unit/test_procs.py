

def test_running_is_alive_less_a_zombie():
    import subprocess
    import time

    from tma.runtime import procs

    child = subprocess.Popen(["sleep", "30"])
    try:
        assert procs.running(child.pid) and procs.alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 5
        while procs.running(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        # exited, not reaped yet: a zombie exists (alive) but does not run
        assert procs.alive(child.pid) and not procs.running(child.pid)
    finally:
        child.wait()
    assert not procs.alive(child.pid) and not procs.running(child.pid)
