// The zlib boundary: Formats is the only module that imports CZlib.
#include <zlib.h>
