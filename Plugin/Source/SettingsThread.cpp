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
