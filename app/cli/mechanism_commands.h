// The subcommands of nopescope-cli mechanism, one file each (cmd_mechanism*.cpp).
#pragma once

#include "cli/commands.h"

namespace nope::cli {

int runAblate(const Args& args);

}  // namespace nope::cli
