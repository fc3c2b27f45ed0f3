// Python's pickle format (protocols 2 to 4), read without Python: a small interpreter for the
// values that state dicts and training checkpoints hold (dicts, lists, tuples, strings, numbers,
// and tensors, which its caller builds through hooks). OrderedDict and defaultdict read as dicts;
// other Python objects (a numpy scalar, an argparse Namespace) as opaque `Object` values, so that
// a file that holds them still reads.
// Not here: the zip archive around the pickle and the tensors' storages (run/torch_pickle.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nope {

struct PickleValue {
    enum class Kind { None, Bool, Int, Float, String, Tensor, List, Tuple, Dict, Global, Object };
    using Ptr = std::shared_ptr<PickleValue>;

    Kind kind = Kind::None;
    int64_t integer = 0;                       // Bool (0 or 1), Int
    double real = 0;                           // Float
    std::string text;                          // String; "module.name" of a Global or Object
    at::Tensor tensor;                         // Tensor
    std::vector<Ptr> items;                    // List, Tuple
    std::vector<std::pair<Ptr, Ptr>> entries;  // Dict, in file order

    // The entry of a Dict under a string key, or null (also when this is not a Dict).
    const PickleValue* find(const std::string& key) const;
};

// "a dict", "a tensor", ... for messages.
std::string describeKind(const PickleValue& value);

struct PickleHooks {
    // REDUCE of a global the interpreter does not know ("torch._utils._rebuild_tensor_v2"):
    // the result, or null to read it as an opaque object.
    std::function<PickleValue::Ptr(const std::string& global,
                                   const std::vector<PickleValue::Ptr>& args)>
        call;
    // BINPERSID: the value a persistent id stands for (torch.save's tensor storages).
    std::function<PickleValue::Ptr(const PickleValue& id)> persistent;
};

// Throws std::runtime_error "damaged pickle (byte N): ..." for a stream it cannot read, and
// passes on what the hooks throw with the same prefix.
PickleValue::Ptr readPickle(std::string_view bytes, const PickleHooks& hooks);

}  // namespace nope
