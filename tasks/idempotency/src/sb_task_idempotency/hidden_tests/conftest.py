import time, pytest
@pytest.fixture(autouse=True)
def _timing(request):
    t = time.time()
    yield
    with open("/tmp/h_idem/durations.txt", "a") as f:
        f.write(f"{time.time()-t:7.3f} {request.node.nodeid}\n")
