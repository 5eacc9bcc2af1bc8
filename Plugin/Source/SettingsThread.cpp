// SPDX-License-Identifier: GPL-3.0-or-later
#include "SettingsThread.h"

#include "QuellProcessor.h"

namespace quell::plugin {

void SettingsThread::run()
{
    while (!threadShouldExit()) {
        processor_.applyPendingSettings();
        wait(50);
    }
}

} // namespace quell::plugin
