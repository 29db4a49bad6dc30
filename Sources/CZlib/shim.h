// The zlib boundary: Formats (server side) and FaultlineSDK (client side) import CZlib.
#include <zlib.h>
