// shim_int.h: what the shim's C++ files (shim_ir.cpp, shim_thinlto.cpp,
// shim_debug.cpp, shim_inline.cpp) share, for them only; their interface to
// C is llvm_shim.h. Only the way an error goes back to C: a heap string the
// caller frees with free().
#ifndef MTPC_SHIM_INT_H
#define MTPC_SHIM_INT_H

#include <cstdlib>
#include <cstring>
#include <string>

// s as a heap C string (malloc, so that C frees it), or NULL without memory.
static inline char *dup_message(const std::string &s)
{
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (p)
		std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

// *error set to msg (heap); returns -1, the shim's failure.
static inline int fail(char **error, const std::string &msg)
{
	*error = dup_message(msg);
	return -1;
}

#endif
