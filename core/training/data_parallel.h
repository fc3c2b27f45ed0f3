// Data-parallel training over LibTorch's own c10d process group: Gloo on CPU, through the
// rendezvous that torchrun and srun set up (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE,
// LOCAL_RANK). Every rank holds the whole model and draws the same global batch; each trains on
// its share of the rows, and the gradients are summed across ranks before the optimizer step, so
// that every rank takes the same step as one process on the whole batch would.
// The trainer (training/trainer.h) decides what each rank does: rank 0 alone evaluates,
// snapshots and writes the run folder.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nope {

// Where a rank finds the others, as torchrun's environment gives it.
struct Rendezvous {
    std::string masterAddress;
    int masterPort = 0;
    int rank = 0;
    int worldSize = 1;
    int localRank = 0;
};

// The rendezvous from the environment, or an error that names the variable and its allowed
// values ("WORLD_SIZE is not set (allowed: the number of processes, 1 to 4096; launchers such as
// torchrun, srun and scripts/launch-local.sh set it)"). Under Slurm without torchrun, SLURM_PROCID,
// SLURM_NTASKS and SLURM_LOCALID stand in for RANK, WORLD_SIZE and LOCAL_RANK.
struct RendezvousOrError {
    std::optional<Rendezvous> rendezvous;
    std::string error;
};
RendezvousOrError rendezvousFromEnvironment();

class DataParallel {
public:
    // Joins the process group: rank 0 serves the rendezvous store (under torchrun's elastic
    // agent, TORCHELASTIC_USE_AGENT_STORE=True, the agent does), every rank connects to it and
    // then to each other. Throws std::runtime_error naming the address when a rank cannot connect
    // or the others do not all arrive within `timeout`.
    DataParallel(const Rendezvous& rendezvous, std::chrono::milliseconds timeout);
    ~DataParallel();
    DataParallel(const DataParallel&) = delete;
    DataParallel& operator=(const DataParallel&) = delete;

    int rank() const { return m_rendezvous.rank; }
    int worldSize() const { return m_rendezvous.worldSize; }
    bool lead() const { return m_rendezvous.rank == 0; }

    // The element-wise sum of `values` over all ranks (a handful of numbers: token counts, the
    // loss, stop flags).
    std::vector<double> sum(const std::vector<double>& values);
    // Rank 0's value, on every rank.
    int broadcastFromLead(int value);
    // Rank 0's tensors copied into every rank's (the weights at the start of a run).
    void broadcastFromLead(const std::vector<at::Tensor>& tensors);
    // Sums the gradients of `parameters` over all ranks, overlapped with the backward pass:
    // attach() once puts a hook on every parameter and packs the parameters, in the order the
    // backward pass reaches them, into buckets of about kBucketBytes; between beginGradients()
    // and finishGradients() a bucket's all-reduce starts as soon as its last gradient is ready.
    // A gradient that arrives adds what the parameter's .grad already holds (the step's earlier
    // micro-batches, whose backward passes ran before beginGradients()). finishGradients()
    // starts any bucket still waiting (a parameter that got no gradient counts as its .grad, or
    // zero), waits for all, and writes the sums into every parameter's .grad.
    void attach(const std::vector<at::Tensor>& parameters);
    void beginGradients();
    void finishGradients();

    static constexpr int64_t kBucketBytes = 16 << 20;

private:
    struct Group;
    struct Bucket;
    void gradientReady(size_t bucket, size_t slot, const at::Tensor& grad);
    void startBucket(Bucket& bucket);

    Rendezvous m_rendezvous;
    std::unique_ptr<Group> m_group;
    std::vector<Bucket> m_buckets;
    size_t m_nextBucket = 0;    // the first bucket whose all-reduce has not started
    bool m_collecting = false;  // between beginGradients() and finishGradients()
};

}  // namespace nope
