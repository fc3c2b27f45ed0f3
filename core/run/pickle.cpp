#include "run/pickle.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace nope {

namespace {

using Kind = PickleValue::Kind;
using Ptr = PickleValue::Ptr;

Ptr make(Kind kind) {
    auto value = std::make_shared<PickleValue>();
    value->kind = kind;
    return value;
}

Ptr makeInt(Kind kind, int64_t integer) {
    auto value = make(kind);
    value->integer = integer;
    return value;
}

Ptr makeReal(double real) {
    auto value = make(Kind::Float);
    value->real = real;
    return value;
}

Ptr makeTuple(std::vector<Ptr> items) {
    auto value = make(Kind::Tuple);
    value->items = std::move(items);
    return value;
}

Ptr makeText(Kind kind, std::string text) {
    auto value = make(kind);
    value->text = std::move(text);
    return value;
}

// The pickle opcodes used by torch.save and LibTorch's pickler (protocols 2 to 4), with the
// names of Python's pickle module.
// clang-format off
enum Opcode : uint8_t {
    kProto = 0x80, kFrame = 0x95, kStop = '.', kMark = '(', kPop = '0', kPopMark = '1',
    kNone = 'N', kNewTrue = 0x88, kNewFalse = 0x89,
    kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kLong1 = 0x8a, kBinFloat = 'G',
    kBinUnicode = 'X', kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d,
    kBinString = 'T', kShortBinString = 'U', kBinBytes = 'B', kShortBinBytes = 'C',
    kBinBytes8 = 0x8e,
    kEmptyList = ']', kAppend = 'a', kAppends = 'e', kList = 'l',
    kEmptyTuple = ')', kTuple = 't', kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87,
    kEmptyDict = '}', kDict = 'd', kSetItem = 's', kSetItems = 'u',
    kGlobal = 'c', kStackGlobal = 0x93, kReduce = 'R', kBuild = 'b', kNewObj = 0x81,
    kBinPersId = 'Q',
    kBinPut = 'q', kLongBinPut = 'r', kMemoize = 0x94, kBinGet = 'h', kLongBinGet = 'j',
};
// clang-format on

// Runs the opcodes over a stack of values; the memo holds values by index for later BINGETs.
class Interpreter {
public:
    Interpreter(std::string_view bytes, const PickleHooks& hooks)
        : m_bytes(bytes), m_hooks(hooks) {}

    Ptr run();
    size_t position() const { return m_pos; }

private:
    [[noreturn]] static void fail(const std::string& what) { throw std::runtime_error(what); }
    const char* take(size_t n) {
        if (n > m_bytes.size() - m_pos) {
            fail("it ends early");
        }
        m_pos += n;
        return m_bytes.data() + m_pos - n;
    }
    uint8_t byte() { return static_cast<uint8_t>(*take(1)); }
    template <typename T>
    T little() {  // little-endian, as pickle and x86 store it
        T value;
        std::memcpy(&value, take(sizeof(T)), sizeof(T));
        return value;
    }
    std::string text(uint64_t n) { return std::string(take(n), n); }
    std::string line();
    int64_t long1();
    double binfloat();

    void push(Ptr value) { m_stack.push_back(std::move(value)); }
    Ptr pop();
    Ptr top() const;
    std::vector<Ptr> popToMark();
    std::vector<Ptr> popItems(size_t n);
    Ptr memo(uint64_t index) const;
    void put(uint64_t index);
    void addItems(const Ptr& target, std::vector<Ptr> items, bool pairs);
    Ptr call(const Ptr& callable, const Ptr& args);
    bool literal(uint8_t op);
    bool container(uint8_t op);

    std::string_view m_bytes;
    size_t m_pos = 0;
    const PickleHooks& m_hooks;
    std::vector<Ptr> m_stack;
    std::vector<size_t> m_marks;  // stack sizes at each MARK
    std::unordered_map<uint64_t, Ptr> m_memo;
};

std::string Interpreter::line() {
    const size_t end = m_bytes.find('\n', m_pos);
    if (end == std::string_view::npos) {
        fail("it ends early");
    }
    std::string s(m_bytes.substr(m_pos, end - m_pos));
    m_pos = end + 1;
    return s;
}

int64_t Interpreter::long1() {
    const uint8_t n = byte();
    if (n > 8) {
        fail("an integer of " + std::to_string(n) + " bytes");
    }
    const char* p = take(n);
    uint64_t value = 0;
    for (int i = n - 1; i >= 0; --i) {
        value = (value << 8) | static_cast<uint8_t>(p[i]);
    }
    if (n > 0 && n < 8 && (static_cast<uint8_t>(p[n - 1]) & 0x80)) {
        value |= ~uint64_t{0} << (8 * n);  // sign-extend
    }
    return static_cast<int64_t>(value);
}

double Interpreter::binfloat() {
    const char* p = take(8);
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) {
        bits = (bits << 8) | static_cast<uint8_t>(p[i]);  // big-endian
    }
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
}

Ptr Interpreter::pop() {
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back())) {
        fail("a value is missing");
    }
    Ptr value = std::move(m_stack.back());
    m_stack.pop_back();
    return value;
}

std::vector<Ptr> Interpreter::popToMark() {
    if (m_marks.empty()) {
        fail("a mark is missing");
    }
    std::vector<Ptr> items(m_stack.begin() + static_cast<std::ptrdiff_t>(m_marks.back()),
                           m_stack.end());
    m_stack.resize(m_marks.back());
    m_marks.pop_back();
    return items;
}

Ptr Interpreter::top() const {
    if (m_stack.empty()) {
        fail("a value is missing");
    }
    return m_stack.back();
}

std::vector<Ptr> Interpreter::popItems(size_t n) {
    std::vector<Ptr> items(n);
    for (auto it = items.rbegin(); it != items.rend(); ++it) {
        *it = pop();
    }
    return items;
}

Ptr Interpreter::memo(uint64_t index) const {
    const auto it = m_memo.find(index);
    if (it == m_memo.end()) {
        fail("memo entry " + std::to_string(index) + " is missing");
    }
    return it->second;
}

namespace {

// Whether `target` is `from` or is held in it, at any depth.
bool holds(const Ptr& from, const PickleValue* target) {
    std::vector<const PickleValue*> todo{from.get()};
    std::unordered_set<const PickleValue*> seen;
    while (!todo.empty()) {
        const PickleValue* v = todo.back();
        todo.pop_back();
        if (v == target) {
            return true;
        }
        if (!seen.insert(v).second) {
            continue;
        }
        for (const auto& item : v->items) {
            todo.push_back(item.get());
        }
        for (const auto& [key, value] : v->entries) {
            todo.push_back(key.get());
            todo.push_back(value.get());
        }
    }
    return false;
}

}  // namespace

// APPEND(S) and SETITEM(S). Items added to an opaque object are its business: dropped. A container
// put inside itself (a damaged file can ask for it through the memo) is refused: no state dict
// holds itself, and the cycle would keep the values alive forever.
// A pickler numbers its memo from 0 with one PUT of at least two bytes each, so an index beyond the
// stream's length is a damaged one; refused here because LibTorch's reader allocates that many
// memo slots before it reads on (training/checkpoint.h checks its archives with this reader).
void Interpreter::put(uint64_t index) {
    if (index > m_bytes.size()) {
        fail("memo index " + std::to_string(index) + " is beyond what a stream of " +
             std::to_string(m_bytes.size()) + " bytes can number");
    }
    m_memo[index] = top();
}

void Interpreter::addItems(const Ptr& target, std::vector<Ptr> items, bool pairs) {
    if (target->kind == Kind::Object) {
        return;
    }
    for (const auto& item : items) {
        if (holds(item, target.get())) {
            fail(describeKind(*target) + " that holds itself");
        }
    }
    if (pairs) {
        if (target->kind != Kind::Dict || items.size() % 2 != 0) {
            fail("dict items for " + describeKind(*target));
        }
        for (size_t i = 0; i < items.size(); i += 2) {
            target->entries.emplace_back(items[i], items[i + 1]);
        }
    } else {
        if (target->kind != Kind::List) {
            fail("list items for " + describeKind(*target));
        }
        target->items.insert(target->items.end(), items.begin(), items.end());
    }
}

// REDUCE: Python's dict types are read as dicts, other callables go to the hook; what the hook
// does not know becomes an opaque object.
Ptr Interpreter::call(const Ptr& callable, const Ptr& args) {
    if (callable->kind != Kind::Global || args->kind != Kind::Tuple) {
        fail("a call of " + describeKind(*callable));
    }
    const std::string& name = callable->text;
    if (name == "collections.OrderedDict" || name == "collections.defaultdict" ||
        name == "builtins.dict") {
        return make(Kind::Dict);  // entries follow by SETITEMS; attributes (BUILD) are dropped
    }
    if (m_hooks.call) {
        if (Ptr result = m_hooks.call(name, args->items)) {
            return result;
        }
    }
    return makeText(Kind::Object, name);
}

// Opcodes that push a literal: numbers, strings, None, booleans. False for any other opcode.
// clang-format off
bool Interpreter::literal(uint8_t op) {
    switch (op) {
        case kNone: push(make(Kind::None)); return true;
        case kNewTrue: push(makeInt(Kind::Bool, 1)); return true;
        case kNewFalse: push(makeInt(Kind::Bool, 0)); return true;
        case kBinInt: push(makeInt(Kind::Int, little<int32_t>())); return true;
        case kBinInt1: push(makeInt(Kind::Int, byte())); return true;
        case kBinInt2: push(makeInt(Kind::Int, little<uint16_t>())); return true;
        case kLong1: push(makeInt(Kind::Int, long1())); return true;
        case kBinFloat: push(makeReal(binfloat())); return true;
        case kBinUnicode: case kBinString: case kBinBytes:
            push(makeText(Kind::String, text(little<uint32_t>()))); return true;
        case kShortBinUnicode: case kShortBinString: case kShortBinBytes:
            push(makeText(Kind::String, text(byte()))); return true;
        case kBinUnicode8: case kBinBytes8:
            push(makeText(Kind::String, text(little<uint64_t>()))); return true;
        default: return false;
    }
}
// clang-format on

// Opcodes that build containers from the stack. False for any other opcode.
bool Interpreter::container(uint8_t op) {
    switch (op) {
        case kEmptyList:
            push(make(Kind::List));
            return true;
        case kEmptyDict:
            push(make(Kind::Dict));
            return true;
        case kEmptyTuple:
            push(makeTuple({}));
            return true;
        case kTuple:
            push(makeTuple(popToMark()));
            return true;
        case kTuple1:
        case kTuple2:
        case kTuple3:
            push(makeTuple(popItems(op - kTuple1 + 1)));
            return true;
        case kList:
        case kDict: {
            auto value = make(op == kList ? Kind::List : Kind::Dict);
            addItems(value, popToMark(), /*pairs=*/op == kDict);
            push(value);
            return true;
        }
        case kAppend:
        case kSetItem: {
            std::vector<Ptr> items = popItems(op == kAppend ? 1 : 2);
            addItems(top(), std::move(items), /*pairs=*/op == kSetItem);
            return true;
        }
        case kAppends:
        case kSetItems: {
            std::vector<Ptr> items = popToMark();
            addItems(top(), std::move(items), /*pairs=*/op == kSetItems);
            return true;
        }
        default:
            return false;
    }
}

// Everything else: framing, marks, memo, globals, calls and storages. Longer than 60 lines for a
// reason: one case per opcode, each a few lines, read as the protocol's table.
Ptr Interpreter::run() {
    for (;;) {
        const uint8_t op = byte();
        if (literal(op) || container(op)) {
            continue;
        }
        switch (op) {
            case kProto:
                byte();
                break;
            case kFrame:
                take(8);
                break;
            case kStop: {
                Ptr result = pop();
                if (!m_stack.empty() || !m_marks.empty()) {
                    fail("values are left over");
                }
                return result;
            }
            case kMark:
                m_marks.push_back(m_stack.size());
                break;
            case kPop:
                pop();
                break;
            case kPopMark:
                popToMark();
                break;
            case kGlobal: {
                std::string module = line();
                push(makeText(Kind::Global, module + "." + line()));
                break;
            }
            case kStackGlobal: {
                Ptr name = pop(), module = pop();
                if (name->kind != Kind::String || module->kind != Kind::String) {
                    fail("a global whose name is not a string");
                }
                push(makeText(Kind::Global, module->text + "." + name->text));
                break;
            }
            case kReduce: {
                Ptr args = pop(), callable = pop();
                push(call(callable, args));
                break;
            }
            case kNewObj: {  // cls.__new__(cls, *args): an object we do not know
                pop();
                Ptr cls = pop();
                push(makeText(Kind::Object, cls->text));
                break;
            }
            case kBuild:  // an object's state, or a dict's attributes: dropped
                pop();
                top();
                break;
            case kBinPersId: {
                Ptr id = pop();
                if (!m_hooks.persistent) {
                    fail("a persistent id, and no reader for it");
                }
                push(m_hooks.persistent(*id));
                break;
            }
            case kBinPut:
                put(byte());
                break;
            case kLongBinPut:
                put(little<uint32_t>());
                break;
            case kMemoize:
                m_memo[m_memo.size()] = top();
                break;
            case kBinGet:
                push(memo(byte()));
                break;
            case kLongBinGet:
                push(memo(little<uint32_t>()));
                break;
            default: {
                char hex[8];
                std::snprintf(hex, sizeof(hex), "0x%02x", op);
                m_pos -= 1;
                fail(std::string("unsupported opcode ") + hex);
            }
        }
    }
}

}  // namespace

const PickleValue* PickleValue::find(const std::string& key) const {
    if (kind != Kind::Dict) {
        return nullptr;
    }
    for (const auto& [k, v] : entries) {
        if (k->kind == Kind::String && k->text == key) {
            return v.get();
        }
    }
    return nullptr;
}

std::string describeKind(const PickleValue& value) {
    switch (value.kind) {
        case Kind::None:
            return "None";
        case Kind::Bool:
            return "a bool";
        case Kind::Int:
            return "an integer";
        case Kind::Float:
            return "a float";
        case Kind::String:
            return "a string";
        case Kind::Tensor:
            return "a tensor";
        case Kind::List:
            return "a list";
        case Kind::Tuple:
            return "a tuple";
        case Kind::Dict:
            return "a dict";
        case Kind::Global:
            return "the class or function " + value.text;
        case Kind::Object:
            return "a Python object (" + value.text + ")";
    }
    return "a value";
}

Ptr readPickle(std::string_view bytes, const PickleHooks& hooks) {
    Interpreter interpreter(bytes, hooks);
    try {
        return interpreter.run();
    } catch (const std::exception& e) {
        throw std::runtime_error("damaged pickle (byte " + std::to_string(interpreter.position()) +
                                 "): " + e.what());
    }
}

}  // namespace nope
