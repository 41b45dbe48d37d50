#pragma once
// The console the CLI writes to: its width, whether it takes colour, and where progress goes.
#include "opval/session.hpp"

namespace opval {

/// stdout's width (its terminal's; else $COLUMNS; else 120), colour (stdout a terminal, NO_COLOR
/// unset or empty, TERM not "dumb"), and progress (redrawn in place when stderr is a terminal,
/// else a line every 30 s).
console_style detect_console_style();

}  // namespace opval
