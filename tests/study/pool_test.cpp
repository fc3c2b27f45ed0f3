// The process pool: parallel jobs with their logs, sequences that stop at the first failure, a
// failing job that does not stop the others, and a stop request that interrupts running jobs.
#include <gtest/gtest.h>

#include <memory>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <map>

#include "common/test_folder.h"
#include "study/process_pool.h"
#include "util/files.h"

namespace {

namespace fs = std::filesystem;
using namespace nope::study;

class Pool : public ::testing::Test {
protected:
    void SetUp() override {
        m_folder = std::make_unique<nope::test::TestFolder>("study-test");
        m_dir = m_folder->path();
    }
    void TearDown() override { m_folder.reset(); }
    PoolJob job(const std::string& name, std::vector<std::vector<std::string>> commands) const {
        return {std::move(commands), m_dir / name / "log.txt"};
    }

    std::unique_ptr<nope::test::TestFolder> m_folder;
    fs::path m_dir;
};

std::vector<std::string> shell(const std::string& script) {
    return {"sh", "-c", script};
}

TEST_F(Pool, AFailingJobDoesNotStopTheOthers) {
    const std::vector<PoolJob> jobs = {
        job("a", {shell("echo out-a; echo err-a >&2")}),
        job("b", {shell("echo failing; exit 3")}),
        job("c", {shell("echo first"), shell("echo second")}),
        job("d", {{"/no/such/program"}}),
    };
    StopRequest stop;
    std::map<size_t, JobEnd> ends;
    std::vector<size_t> started;
    runJobs(jobs, 2, stop,
            {[&](size_t i) { started.push_back(i); },
             [&](const JobEnd& end) { ends[end.index] = end; }});
    EXPECT_EQ(started, (std::vector<size_t>{0, 1, 2, 3}));
    ASSERT_EQ(ends.size(), 4u);
    EXPECT_EQ(ends[0].outcome, JobOutcome::Done);
    EXPECT_EQ(ends[1].outcome, JobOutcome::Failed);
    EXPECT_EQ(ends[1].exitCode, 3);
    EXPECT_EQ(ends[2].outcome, JobOutcome::Done);
    EXPECT_EQ(ends[3].outcome, JobOutcome::Failed);
    EXPECT_EQ(ends[3].exitCode, 127);
    EXPECT_GE(ends[0].seconds, 0.0);

    const std::string a = nope::readFile(m_dir / "a" / "log.txt");
    EXPECT_NE(a.find("out-a"), std::string::npos) << a;
    EXPECT_NE(a.find("err-a"), std::string::npos) << a;
    const std::string c = nope::readFile(m_dir / "c" / "log.txt");
    EXPECT_LT(c.find("first"), c.find("second")) << c;
    EXPECT_NE(nope::readFile(m_dir / "d" / "log.txt").find("cannot start /no/such/program"),
              std::string::npos);
}

TEST_F(Pool, ASequenceStopsAtItsFirstFailure) {
    const std::vector<PoolJob> jobs = {job("s", {{"true"}, shell("exit 4"), shell("echo never")})};
    StopRequest stop;
    std::vector<JobEnd> ends;
    runJobs(jobs, 1, stop, {nullptr, [&](const JobEnd& end) { ends.push_back(end); }});
    ASSERT_EQ(ends.size(), 1u);
    EXPECT_EQ(ends[0].outcome, JobOutcome::Failed);
    EXPECT_EQ(ends[0].exitCode, 4);
    EXPECT_EQ(nope::readFile(m_dir / "s" / "log.txt").find("never\n"), std::string::npos);
}

TEST_F(Pool, AStopInterruptsRunningJobsAndStartsNoMore) {
    std::vector<PoolJob> jobs;
    for (const char* name : {"a", "b", "c"}) {
        jobs.push_back(job(name, {{"sleep", "30"}, shell("echo never")}));
    }
    StopRequest stop;
    std::vector<JobEnd> ends;
    int started = 0;
    runJobs(jobs, 2, stop,
            {[&](size_t) {
                 if (++started == 2) {
                     stop.request(true);  // as from a signal the children did not get
                 }
             },
             [&](const JobEnd& end) { ends.push_back(end); }});
    EXPECT_EQ(started, 2);
    ASSERT_EQ(ends.size(), 2u);
    for (const auto& end : ends) {
        EXPECT_EQ(end.outcome, JobOutcome::Interrupted);
        EXPECT_EQ(end.exitCode, 128 + SIGINT);
    }
    EXPECT_FALSE(fs::exists(m_dir / "c"));
}

TEST_F(Pool, AThrowingCallbackEndsTheChildren) {
    // the sleeping child writes its process id, so that the test can see it is gone
    const fs::path pidFile = m_dir / "sleeper.pid";
    const std::vector<PoolJob> jobs = {
        job("a", {shell("echo $$ > '" + pidFile.string() + "'; exec sleep 30")}),
        job("b", {shell("until [ -s '" + pidFile.string() + "' ]; do :; done")})};
    StopRequest stop;
    EXPECT_THROW(runJobs(jobs, 2, stop,
                         {nullptr, [](const JobEnd&) { throw std::runtime_error("disk full"); }}),
                 std::runtime_error);
    const pid_t sleeper = std::stoi(nope::readFile(pidFile));
    EXPECT_EQ(::kill(sleeper, 0), -1);  // ended and reaped, not left running
    EXPECT_EQ(errno, ESRCH);
}

}  // namespace
