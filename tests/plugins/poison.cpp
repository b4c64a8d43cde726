// Not a plugin: a shared object that aborts the process as soon as it is mapped. Tests point
// manifests at it to prove a library is never opened: one whose sha256 does not match (checked
// before dlopen), and a valid one that is only listed (listing reads manifests only).

#include <cstdio>
#include <cstdlib>

__attribute__((constructor)) static void poison() {
  std::fputs("poison fixture: dlopen ran although the sha256 did not match\n", stderr);
  std::abort();
}
