// Not a plugin: a shared object with an STB_GNU_UNIQUE symbol (a static local of an inline
// function with default visibility, compiled by GCC without -fno-gnu-unique), on which
// check_plugin_symbols.sh must fail.

inline int& unique_counter() {
  static int counter = 0;
  return counter;
}

extern "C" __attribute__((visibility("default"))) int unique_symbol_bump() {
  return ++unique_counter();
}
