// Builds the tests' precompiled header (tests/CMakeLists.txt). An executable, compiled exactly
// as the tests are, so that they can reuse it.
int main() { return 0; }
