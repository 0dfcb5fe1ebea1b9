# pytest-timeout (its SIGALRM method) ends a test that computes.
def test_spins():
    while True:
        pass
