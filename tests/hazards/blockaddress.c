// HAZARD 7: blockaddress. GNU C computed goto with label-address tables (a static table inside
// the function, i.e. a global initialized with blockaddress constants, and label differences).
// Every user of a blockaddress must be co-located with its function and the function must
// never be duplicated (a copy's labels are different addresses). Two interpreters and several
// external callers.
#include <stdio.h>

__attribute__((noinline)) int interp(const unsigned char *code, int acc) {
  static void *const ops[] = {&&op_halt, &&op_inc, &&op_dbl, &&op_neg, &&op_sub3};
  const unsigned char *pc = code;
  goto *ops[*pc++];
op_inc:  acc += 1;  goto *ops[*pc++];
op_dbl:  acc *= 2;  goto *ops[*pc++];
op_neg:  acc = -acc; goto *ops[*pc++];
op_sub3: acc -= 3;  goto *ops[*pc++];
op_halt: return acc;
}

__attribute__((noinline)) int interp_rel(const unsigned char *code, int acc) {
  static const int offs[] = {&&r_halt - &&r_halt, &&r_add - &&r_halt, &&r_mul - &&r_halt};
  const unsigned char *pc = code;
  goto *(&&r_halt + offs[*pc++]);
r_add: acc += 7; goto *(&&r_halt + offs[*pc++]);
r_mul: acc *= 5; goto *(&&r_halt + offs[*pc++]);
r_halt: return acc;
}

__attribute__((noinline)) void *label_of(int i) {   // a label address escapes
  static void *const t[] = {&&l0, &&l1};
  if (i < 0) { l0: return 0; }
  if (i > 100) { l1: return (void *)1; }
  return t[i & 1];
}

static const unsigned char prog1[] = {1, 2, 2, 3, 4, 0};
static const unsigned char prog2[] = {2, 2, 1, 4, 4, 1, 0};
static const unsigned char prog3[] = {1, 2, 1, 2, 0};

int run_one(int x) { return interp(prog1, x); }
int run_two(int x) { return interp(prog2, x) + interp_rel(prog3, x); }
int run_three(int x) { return interp_rel(prog3, x * 2) - interp(prog1, x); }

int main(void) {
  printf("one=%d two=%d three=%d\n", run_one(5), run_two(6), run_three(7));
  printf("labels_distinct=%d same=%d\n", label_of(0) != label_of(1), label_of(2) == label_of(4));
  return 0;
}
