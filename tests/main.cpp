// The one Catch2 suite, built natively and to WASM (tests mirror core/).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
