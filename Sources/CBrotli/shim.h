// The brotli boundary: only the Formats module imports CBrotli, and only for decoding
// (`Content-Encoding: br`, which sentry-sdk uses whenever the `brotli` package is installed).
#include <brotli/decode.h>
