// The names of the element types (ir/Dtype.h's table), for "did you mean"
// answers to a type name that is not one.
// Depends on the standard library only.
#pragma once

#include <string_view>
#include <vector>

namespace tilescope {

// Every element type's name, in the table's order.
std::vector<std::string_view> dtypeNames();

} // namespace tilescope
