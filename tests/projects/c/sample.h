int util_compute(int x);
int util_weak(void);
int shlib_api(int x);
const char *shlib_name(void);
int big_entry(int n);
int big_alias(int n);
int big_dispatch(int x);
extern _Thread_local int big_tls;
