; HAZARD 3: interposable linkonce (non-ODR) definition: @lo_interp is overridden by a strong
; definition in support/main_ir_linkage.c, so no partition may get a copy of its body.
; HAZARD 4: available_externally input definition (@ae_fn: its real owner is main), which must
; stay a non-owned copy (never become a definition: duplicate symbol), and linkonce_odr owners,
; one unnamed_addr (may be duplicated) and one whose address is compared (one address).
; HAZARD 7: blockaddress constants held in a global used by ANOTHER function (@bcaller passes a
; label address of @bfn into it): the user must be co-located with @bfn, and @bfn never copied.
; MTPC-MAIN: support/main_ir_linkage.c
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@btab = internal constant [3 x ptr] [ptr blockaddress(@bfn, %l1), ptr blockaddress(@bfn, %l2), ptr blockaddress(@bfn, %l3)]

define linkonce i32 @lo_interp(i32 %x) {
  %r = add i32 %x, 1
  ret i32 %r
}

define available_externally i32 @ae_fn(i32 %x) {
  %r = mul i32 %x, 5
  ret i32 %r
}

define linkonce_odr i32 @odr_dup(i32 %x) unnamed_addr {
  %a = mul i32 %x, %x
  %b = add i32 %a, 3
  ret i32 %b
}

define linkonce_odr i32 @odr_addr(i32 %x) noinline {
  %r = sub i32 100, %x
  ret i32 %r
}

define i32 @bfn(ptr %target, i32 %x) noinline {
entry:
  indirectbr ptr %target, [label %l1, label %l2, label %l3]
l1:
  %a = add i32 %x, 11
  ret i32 %a
l2:
  %b = mul i32 %x, 13
  ret i32 %b
l3:
  %c = sub i32 %x, 17
  ret i32 %c
}

define i32 @bcaller(i32 %i, i32 %x) noinline {
  %m = urem i32 %i, 3
  %idx = zext i32 %m to i64
  %p = getelementptr inbounds [3 x ptr], ptr @btab, i64 0, i64 %idx
  %t = load ptr, ptr %p
  %r = call i32 @bfn(ptr %t, i32 %x)
  ret i32 %r
}

define i32 @bdirect(i32 %x) noinline {
  %r = call i32 @bfn(ptr blockaddress(@bfn, %l2), i32 %x)
  ret i32 %r
}

define i32 @k_one(i32 %x) noinline {
  %a = call i32 @lo_interp(i32 %x)
  %b = call i32 @ae_fn(i32 %a)
  %c = call i32 @odr_dup(i32 %b)
  ret i32 %c
}

define i32 @k_two(i32 %x) noinline {
  %a = call i32 @lo_interp(i32 %x)
  %b = call i32 @odr_dup(i32 %a)
  %c = call i32 @odr_addr(i32 %b)
  ret i32 %c
}

define i32 @k_three(i32 %x) noinline {
  %a = call i32 @ae_fn(i32 %x)
  %b = call i32 @odr_addr(i32 %a)
  ret i32 %b
}

define ptr @addr_a() noinline {
  ret ptr @odr_addr
}

define ptr @addr_b() noinline {
  ret ptr @odr_addr
}
