// Fuzz target: a run folder's evaluations.csv, read as the window's curves and the run list read
// it, and as a resumed run keeps it (RunWriter's rows up to the resumed step).
#include "fuzz_input.h"
#include "run/run_catalog.h"
#include "run/run_folder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto& dir = nope::fuzz::runFolder();
    // the metrics.csv whose evaluations the file's merge with (a resume rewrites it: each time)
    nope::fuzz::writeInput("run/metrics.csv",
                           "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,"
                           "elapsed_s,eval_step\n0,,4.7,0.00,0,0,0.5,0\n10,1.2,1.1,5.00,0.001,"
                           "900,3.0,10\n");
    nope::fuzz::writeInput("run/evaluations.csv", nope::fuzz::asString(data, size));
    nope::fuzz::readEach([&] { nope::readRunCurves(dir); }, [&] { nope::summarizeRun(dir); },
                         [&] { nope::RunWriter resumed(dir, /*continuing=*/true, 1000); });
    return 0;
}
