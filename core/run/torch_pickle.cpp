#include "run/torch_pickle.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>

#include "util/zip_directory.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

using Kind = PickleValue::Kind;
using Ptr = PickleValue::Ptr;
using caffe2::serialize::PyTorchStreamReader;

// The first line of a LibTorch error, without its C++ backtrace.
std::string firstLine(const std::string& message) {
    return message.substr(0, message.find('\n'));
}

std::optional<at::ScalarType> storageType(const std::string& global) {
    static const std::map<std::string, at::ScalarType> kTypes = {
        {"torch.FloatStorage", at::kFloat},       {"torch.HalfStorage", at::kHalf},
        {"torch.BFloat16Storage", at::kBFloat16}, {"torch.DoubleStorage", at::kDouble},
        {"torch.LongStorage", at::kLong},         {"torch.IntStorage", at::kInt},
        {"torch.ShortStorage", at::kShort},       {"torch.CharStorage", at::kChar},
        {"torch.ByteStorage", at::kByte},         {"torch.BoolStorage", at::kBool}};
    const auto it = kTypes.find(global);
    return it == kTypes.end() ? std::nullopt : std::optional<at::ScalarType>(it->second);
}

Ptr tensorValue(torch::Tensor tensor) {
    auto value = std::make_shared<PickleValue>();
    value->kind = Kind::Tensor;
    value->tensor = std::move(tensor);
    return value;
}

// The tensors of one archive: storages read once from data/<key> and shared by their views.
class TensorReader {
public:
    explicit TensorReader(PyTorchStreamReader& zip) : m_zip(zip) {}

    PickleHooks hooks() {
        return {[this](const std::string& global, const std::vector<Ptr>& args) {
                    return call(global, args);
                },
                [this](const PickleValue& id) { return storage(id); }};
    }
    bool sawLibTorchTag() const { return m_libTorchTag; }

private:
    Ptr call(const std::string& global, const std::vector<Ptr>& args);
    Ptr rebuildTensor(const std::vector<Ptr>& args) const;
    Ptr storage(const PickleValue& id);

    PyTorchStreamReader& m_zip;
    std::map<std::string, torch::Tensor> m_storages;
    bool m_libTorchTag = false;
};

Ptr TensorReader::call(const std::string& global, const std::vector<Ptr>& args) {
    if (global == "torch._utils._rebuild_tensor_v2" || global == "torch._utils._rebuild_tensor") {
        return rebuildTensor(args);
    }
    const bool libTorchTag = global.rfind("torch.jit._pickle.", 0) == 0;  // restore_type_tag...
    if (libTorchTag || global == "torch._utils._rebuild_parameter" ||
        global == "torch._utils._rebuild_parameter_with_state") {
        m_libTorchTag = m_libTorchTag || libTorchTag;
        if (args.empty()) {
            throw std::runtime_error(global + " without arguments");
        }
        return args[0];  // the tagged container, or the parameter's tensor
    }
    return nullptr;
}

// (storage, offset, size, stride, ...) -> a view of the storage, checked to stay inside it.
Ptr TensorReader::rebuildTensor(const std::vector<Ptr>& a) const {
    auto isInt = [](const Ptr& v) { return v->kind == Kind::Int; };
    auto isIntTuple = [&](const Ptr& v) {
        return v->kind == Kind::Tuple && std::all_of(v->items.begin(), v->items.end(), isInt);
    };
    if (a.size() < 4 || a[0]->kind != Kind::Tensor || !isInt(a[1]) || !isIntTuple(a[2]) ||
        !isIntTuple(a[3]) || a[2]->items.size() != a[3]->items.size()) {
        throw std::runtime_error("a tensor with malformed arguments");
    }
    const torch::Tensor& flat = a[0]->tensor;
    const int64_t offset = a[1]->integer;
    std::vector<int64_t> size, stride;
    int64_t last = offset;  // the highest storage index the view reaches
    bool overflow = offset < 0;
    for (size_t d = 0; d < a[2]->items.size(); ++d) {
        size.push_back(a[2]->items[d]->integer);
        stride.push_back(a[3]->items[d]->integer);
        int64_t reach = 0;
        overflow =
            overflow || size.back() < 0 || stride.back() < 0 ||
            __builtin_mul_overflow(std::max<int64_t>(size.back() - 1, 0), stride.back(), &reach) ||
            __builtin_add_overflow(last, reach, &last);
    }
    if (overflow) {
        throw std::runtime_error("a tensor with a size or stride out of range");
    }
    if (std::find(size.begin(), size.end(), 0) != size.end()) {
        return tensorValue(torch::empty(size, flat.options()));
    }
    if (last >= flat.numel()) {
        throw std::runtime_error("a tensor reaches past the end of its storage");
    }
    return tensorValue(flat.as_strided(size, stride, offset));
}

// ('storage', <storage type>, key, location, numel) -> the storage as a flat tensor.
Ptr TensorReader::storage(const PickleValue& id) {
    const auto& f = id.items;
    if (id.kind != Kind::Tuple || f.size() < 5 || f[0]->kind != Kind::String ||
        f[0]->text != "storage" || f[1]->kind != Kind::Global || f[2]->kind != Kind::String ||
        f[4]->kind != Kind::Int || f[4]->integer < 0) {
        throw std::runtime_error("a malformed storage reference");
    }
    const std::optional<at::ScalarType> type = storageType(f[1]->text);
    if (!type) {
        throw std::runtime_error("unsupported storage type " + f[1]->text);
    }
    torch::Tensor& flat = m_storages[f[2]->text];
    if (!flat.defined()) {
        const std::string record = "data/" + f[2]->text;
        if (!m_zip.hasRecord(record)) {
            throw std::runtime_error("storage " + record + " is missing");
        }
        auto [data, bytes] = m_zip.getRecord(record);
        const int64_t numel = f[4]->integer;
        if (bytes / c10::elementSize(*type) != static_cast<size_t>(numel) ||
            bytes % c10::elementSize(*type) != 0) {
            throw std::runtime_error("storage " + record + " has " + std::to_string(bytes) +
                                     " bytes, not " + std::to_string(numel) + " elements of " +
                                     c10::toString(*type));
        }
        flat = torch::empty({numel}, torch::TensorOptions().dtype(*type));
        std::memcpy(flat.data_ptr(), data.get(), bytes);
    }
    return tensorValue(flat);
}

PickledFile readArchive(PyTorchStreamReader& zip) {
    if (!zip.hasRecord("data.pkl")) {
        throw std::runtime_error("a zip archive without data.pkl (not written by torch.save)");
    }
    if (zip.hasRecord("byteorder")) {
        auto [data, size] = zip.getRecord("byteorder");
        if (std::string(static_cast<const char*>(data.get()), size) != "little") {
            throw std::runtime_error("tensors stored big-endian (only little-endian is read)");
        }
    }
    auto [data, size] = zip.getRecord("data.pkl");
    TensorReader tensors(zip);
    PickledFile file;
    file.root =
        readPickle(std::string_view(static_cast<const char*>(data.get()), size), tensors.hooks());
    file.writtenByLibTorch = tensors.sawLibTorchTag();
    return file;
}

// The first bytes of PyTorch's legacy format: pickle protocol 2, then its magic number.
bool isLegacyTorchFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char head[4] = {};
    in.read(head, sizeof(head));
    return in && std::memcmp(head, "\x80\x02\x8a\x0a", 4) == 0;
}

}  // namespace

PickledFile readPickledFile(const fs::path& path) {
    if (!fs::is_regular_file(path)) {
        throw std::runtime_error(path.string() + ": no such file");
    }
    if (isLegacyTorchFile(path)) {
        throw std::runtime_error(path.string() +
                                 ": saved in PyTorch's legacy format (before 1.6); re-save it "
                                 "with torch.save(torch.load(f), f) in a newer PyTorch");
    }
    try {
        PyTorchStreamReader zip(path.string());
        return readArchive(zip);
    } catch (const std::exception& e) {
        throw std::runtime_error(path.string() +
                                 ": not a readable PyTorch file (truncated, corrupt or not "
                                 "written by torch.save): " +
                                 firstLine(e.what()));
    }
}

bool isTorchScriptArchive(const fs::path& path) {
    try {
        PyTorchStreamReader zip(path.string());
        return zip.hasRecord("constants.pkl");
    } catch (const std::exception&) {
        return false;
    }
}

void checkTorchArchive(std::string_view archive) {
    const PickleHooks anyStorage{
        nullptr, [](const PickleValue&) { return std::make_shared<PickleValue>(); }};
    for (const ZipRecord& record : readZipDirectory(archive)) {
        const bool pickle =
            record.name.size() >= 3 &&
            record.name.compare(record.name.size() - 3, 3, "pkl") == 0;  // .pkl, .debug_pkl
        if (pickle && record.method != 0) {
            throw std::runtime_error("record " + record.name +
                                     " is compressed (LibTorch stores its pickles uncompressed)");
        }
        if (pickle) {
            try {
                readPickle(storedRecordBytes(archive, record), anyStorage);
            } catch (const std::exception& e) {
                throw std::runtime_error(record.name + ": " + e.what());
            }
        }
    }
}

}  // namespace nope
