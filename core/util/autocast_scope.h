// Turns LibTorch's CPU autocast (bf16) on or off for a scope, like Python's torch.autocast:
// restores the previous state on exit and clears autocast's cache of bf16 weight copies when
// the outermost scope ends. Without that clear, a later forward pass would reuse bf16 copies of
// weights the optimizer has since changed.
#pragma once

#include <ATen/autocast_mode.h>

namespace nope {

class AutocastScope {
public:
    explicit AutocastScope(bool enabled)
        : m_previous(at::autocast::is_cpu_enabled()),
          m_previousDtype(at::autocast::get_autocast_cpu_dtype()) {
        at::autocast::set_cpu_enabled(enabled);
        at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
        at::autocast::increment_nesting();
    }
    ~AutocastScope() {
        if (at::autocast::decrement_nesting() == 0) {
            at::autocast::clear_cache();
        }
        at::autocast::set_cpu_enabled(m_previous);
        at::autocast::set_autocast_cpu_dtype(m_previousDtype);
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    bool m_previous;
    at::ScalarType m_previousDtype;
};

}  // namespace nope
