#include "training/data_parallel.h"

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO  // LibTorch's Gloo process group, in libtorch_cpu (headers: libgloo-dev)
#endif
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>
#include <stdexcept>

#include "util/parse_number.h"

namespace nope {

namespace {

constexpr int kMaxWorld = 4096;

// The first line of a LibTorch error, without its C++ backtrace.
std::string firstLine(const std::string& message) {
    return message.substr(0, message.find('\n'));
}

const char* environment(const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value && *value ? value : (fallback ? std::getenv(fallback) : nullptr);
}

// An integer variable in [low, high]: its value, or the error that names it.
std::optional<int> intVariable(const char* name, const char* slurmName, int low, int high,
                               const std::string& meaning, std::string& error) {
    const char* text = environment(name, slurmName);
    const std::string allowed = " (allowed: " + meaning + ", " + std::to_string(low) + " to " +
                                std::to_string(high) +
                                "; launchers such as torchrun, srun and scripts/launch-local.sh "
                                "set it)";
    if (!text) {
        error = std::string(name) + " is not set" + allowed;
        return std::nullopt;
    }
    const auto value = parseInteger<int64_t>(text);
    if (!value || *value < low || *value > high) {
        error = std::string(name) + " is '" + text + "'" + allowed;
        return std::nullopt;
    }
    return static_cast<int>(*value);
}

// Waits for a collective; a rank that died or lost its connection fails it on the others.
void waitFor(const c10::intrusive_ptr<c10d::Work>& work) {
    try {
        work->wait();
    } catch (const std::exception& e) {
        throw std::runtime_error(
            "the process group broke (another rank stopped or lost its connection; the run "
            "folder keeps its last checkpoint, --resume continues it): " +
            firstLine(e.what()));
    }
}

bool isLoopback(const std::string& address) {
    return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

}  // namespace

RendezvousOrError rendezvousFromEnvironment() {
    RendezvousOrError result;
    Rendezvous r;
    const char* address = environment("MASTER_ADDR", nullptr);
    if (!address) {
        result.error =
            "MASTER_ADDR is not set (allowed: the host name or address of rank 0; launchers such "
            "as torchrun and scripts/launch-local.sh set it, under srun export it)";
        return result;
    }
    r.masterAddress = address;
    std::string& error = result.error;
    const auto port = intVariable("MASTER_PORT", nullptr, 1, 65535, "a free TCP port", error);
    const auto world =
        intVariable("WORLD_SIZE", "SLURM_NTASKS", 1, kMaxWorld, "the number of processes", error);
    if (!port || !world) {
        return result;
    }
    const auto rank =
        intVariable("RANK", "SLURM_PROCID", 0, *world - 1, "this process's number", error);
    if (!rank) {
        return result;
    }
    const char* local = environment("LOCAL_RANK", "SLURM_LOCALID");
    const auto localRank = local ? parseInteger<int64_t>(local) : std::optional<int64_t>(0);
    if (!localRank || *localRank < 0 || *localRank >= *world) {
        error = std::string("LOCAL_RANK is '") + local +
                "' (allowed: this process's number on its machine, 0 to " +
                std::to_string(*world - 1) + ")";
        return result;
    }
    r.masterPort = *port;
    r.worldSize = *world;
    r.rank = *rank;
    r.localRank = static_cast<int>(*localRank);
    result.rendezvous = r;
    return result;
}

struct DataParallel::Group {
    c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
    std::vector<std::pair<at::Tensor, unsigned>> hooks;  // removed with the group
};

DataParallel::DataParallel(const Rendezvous& rendezvous, std::chrono::milliseconds timeout)
    : m_rendezvous(rendezvous), m_group(std::make_unique<Group>()) {
    const std::string where = m_rendezvous.masterAddress + ":" +
                              std::to_string(m_rendezvous.masterPort) + " (rank " +
                              std::to_string(rank()) + " of " + std::to_string(worldSize()) + ")";
    try {
        // Under torchrun's elastic agent the agent serves the store and every rank is its client,
        // under the prefix of the agent's current attempt (TORCHELASTIC_USE_AGENT_STORE).
        const char* agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
        const bool agent = agentStore && std::string(agentStore) == "True";
        c10d::TCPStoreOptions storeOptions;
        storeOptions.port = static_cast<uint16_t>(m_rendezvous.masterPort);
        storeOptions.isServer = lead() && !agent;
        storeOptions.numWorkers = static_cast<size_t>(worldSize());
        storeOptions.waitWorkers = !agent;
        storeOptions.timeout = timeout;
        c10::intrusive_ptr<c10d::Store> store =
            c10::make_intrusive<c10d::TCPStore>(m_rendezvous.masterAddress, storeOptions);
        if (agent) {
            const char* attempt = std::getenv("TORCHELASTIC_RESTART_COUNT");
            store = c10::make_intrusive<c10d::PrefixStore>(
                std::string("/worker/attempt_") + (attempt && *attempt ? attempt : "0"), store);
        }
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        // Gloo's own sockets: on the loopback when the ranks meet there; otherwise the interface
        // GLOO_SOCKET_IFNAME names, or the one this machine's host name resolves to.
        if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
            options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
        } else if (isLoopback(m_rendezvous.masterAddress)) {
            options->devices.push_back(
                c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        } else {
            options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        }
        options->threads = 1;
        m_group->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(
            c10::make_intrusive<c10d::PrefixStore>("nopescope", store), rank(), worldSize(),
            options);
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot join the process group at " + where + ": " +
                                 firstLine(e.what()));
    }
}

std::vector<double> DataParallel::sum(const std::vector<double>& values) {
    std::vector<at::Tensor> tensors{
        torch::tensor(values, torch::TensorOptions().dtype(torch::kDouble))};
    waitFor(m_group->gloo->allreduce(tensors));
    const at::Tensor& summed = tensors.front();
    return std::vector<double>(summed.data_ptr<double>(),
                               summed.data_ptr<double>() + summed.numel());
}

int DataParallel::broadcastFromLead(int value) {
    std::vector<at::Tensor> tensors{torch::tensor({int64_t{value}})};
    waitFor(m_group->gloo->broadcast(tensors));
    return static_cast<int>(tensors.front().item<int64_t>());
}

void DataParallel::broadcastFromLead(const std::vector<at::Tensor>& tensors) {
    torch::NoGradGuard noGrad;
    for (const at::Tensor& tensor : tensors) {
        std::vector<at::Tensor> one{tensor.detach().contiguous()};
        waitFor(m_group->gloo->broadcast(one));
        if (!lead()) {
            tensor.detach().copy_(one.front());
        }
    }
}

struct DataParallel::Bucket {
    std::vector<at::Tensor> parameters;
    std::vector<int64_t> offsets;    // of each parameter's gradient in the buffer
    std::vector<at::Tensor> buffer;  // one flat tensor, as allreduce takes it
    std::vector<bool> ready;
    size_t readyCount = 0;
    c10::intrusive_ptr<c10d::Work> work;
};

DataParallel::~DataParallel() {
    // Gloo may still read a bucket's buffer (a step that threw mid-backward), and the hooks
    // point at this object: both end here.
    for (Bucket& bucket : m_buckets) {
        if (bucket.work) {
            try {
                bucket.work->wait();
            } catch (const std::exception&) {
            }
        }
    }
    for (auto& [parameter, hook] : m_group->hooks) {
        parameter.remove_hook(hook);
    }
}

void DataParallel::attach(const std::vector<at::Tensor>& parameters) {
    for (auto& [parameter, hook] : m_group->hooks) {
        parameter.remove_hook(hook);
    }
    m_group->hooks.clear();
    m_buckets.clear();
    int64_t bytes = 0;
    // the backward pass reaches the last layers first
    for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
        const at::Tensor& p = *it;
        const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
        if (m_buckets.empty() || bytes + size > kBucketBytes ||
            m_buckets.back().parameters.front().scalar_type() != p.scalar_type()) {
            m_buckets.emplace_back();
            bytes = 0;
        }
        Bucket& bucket = m_buckets.back();
        const size_t index = m_buckets.size() - 1, slot = bucket.parameters.size();
        bucket.offsets.push_back(
            bucket.offsets.empty() ? 0 : bucket.offsets.back() + bucket.parameters.back().numel());
        bucket.parameters.push_back(p);
        bytes += size;
        const unsigned hook =
            at::Tensor(p).register_hook([this, index, slot](const at::Tensor& grad) {
                gradientReady(index, slot, grad);
                return at::Tensor();  // the gradient itself unchanged
            });
        m_group->hooks.emplace_back(p, hook);
    }
    for (Bucket& bucket : m_buckets) {
        const at::Tensor& last = bucket.parameters.back();
        bucket.buffer = {torch::zeros({bucket.offsets.back() + last.numel()}, last.options())};
        bucket.ready.assign(bucket.parameters.size(), false);
    }
}

void DataParallel::beginGradients() {
    for (Bucket& bucket : m_buckets) {
        if (bucket.work) {  // left by a step that threw: Gloo must be done with the buffer
            waitFor(bucket.work);
        }
        bucket.ready.assign(bucket.parameters.size(), false);
        bucket.readyCount = 0;
        bucket.work.reset();
    }
    m_nextBucket = 0;
    m_collecting = true;
}

void DataParallel::gradientReady(size_t index, size_t slot, const at::Tensor& grad) {
    if (!m_collecting) {
        return;  // a backward pass outside a training step
    }
    Bucket& bucket = m_buckets[index];
    if (bucket.ready[slot]) {
        return;  // a leaf's hook runs once per backward pass, with its whole gradient
    }
    torch::NoGradGuard noGrad;
    auto into = bucket.buffer.front().narrow(0, bucket.offsets[slot], grad.numel());
    into.copy_(grad.reshape({-1}));
    // the step's earlier micro-batches (the hook runs before this gradient joins .grad)
    if (const at::Tensor& before = bucket.parameters[slot].grad(); before.defined()) {
        into.add_(before.reshape({-1}));
    }
    bucket.ready[slot] = true;
    ++bucket.readyCount;
    // Collectives must be issued in the same order on every rank: buckets start in index
    // order, each once it and all before it are full.
    while (m_nextBucket < m_buckets.size() &&
           m_buckets[m_nextBucket].readyCount == m_buckets[m_nextBucket].parameters.size()) {
        startBucket(m_buckets[m_nextBucket++]);
    }
}

void DataParallel::startBucket(Bucket& bucket) {
    bucket.work = m_group->gloo->allreduce(bucket.buffer);
}

void DataParallel::finishGradients() {
    torch::NoGradGuard noGrad;
    m_collecting = false;
    for (; m_nextBucket < m_buckets.size(); ++m_nextBucket) {
        Bucket& bucket = m_buckets[m_nextBucket];
        for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
            if (!bucket.ready[slot]) {  // no gradient from the last part: the earlier ones'
                auto into = bucket.buffer.front().narrow(0, bucket.offsets[slot],
                                                         bucket.parameters[slot].numel());
                const at::Tensor& before = bucket.parameters[slot].grad();
                if (before.defined()) {
                    into.copy_(before.reshape({-1}));
                } else {
                    into.zero_();
                }
            }
        }
        startBucket(bucket);
    }
    for (Bucket& bucket : m_buckets) {
        if (!bucket.work) {
            continue;  // no beginGradients() before: nothing was collected
        }
        waitFor(bucket.work);
        for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
            at::Tensor& p = bucket.parameters[slot];
            const at::Tensor sum =
                bucket.buffer.front().narrow(0, bucket.offsets[slot], p.numel()).view_as(p);
            if (p.grad().defined()) {
                p.mutable_grad().copy_(sum);
            } else {
                p.mutable_grad() = sum.clone();
            }
        }
        bucket.work.reset();
    }
}

}  // namespace nope
