; HAZARD 12 (IR): unnamed globals, symbols already promoted by ThinLTO, constant-expression
; references in tables. @0 (data) and @1 (an internal function) have no name: a splitter that
; must promote them needs a stable, deterministic name. @helper.llvm.1234 and @state.llvm.1234
; are hidden symbols ThinLTO already promoted (they are globals of the unsplit object and must
; stay exactly so, never re-localized). A vtable-like constant table mixes function pointers,
; an unnamed function and a GEP constant expression into unnamed data.
; HAZARD 12: constant-expression references in vtables and tables
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@0 = internal global [4 x i32] [i32 10, i32 20, i32 30, i32 40]
@state.llvm.1234 = hidden global i32 7
@fmt = private unnamed_addr constant [27 x i8] c"one=%d two=%d three=%d %d\0A\00"
@fmt2 = private unnamed_addr constant [18 x i8] c"table=%d same=%d\0A\00"
@vtable = internal constant { [4 x ptr] } { [4 x ptr] [ptr @1, ptr @helper.llvm.1234, ptr @local_op, ptr getelementptr (i8, ptr @0, i64 8)] }
@ext_table = constant [2 x ptr] [ptr @two, ptr getelementptr inbounds ({ [4 x ptr] }, ptr @vtable, i32 0, i32 0, i32 1)]

declare i32 @printf(ptr, ...)

define internal i32 @1(i32 %x) noinline {
  %p = getelementptr inbounds [4 x i32], ptr @0, i64 0, i64 1
  %v = load i32, ptr %p
  %r = add i32 %v, %x
  store i32 %r, ptr %p
  ret i32 %r
}

define hidden i32 @helper.llvm.1234(i32 %x) noinline {
  %s = load i32, ptr @state.llvm.1234
  %m = mul i32 %x, %s
  %n = add i32 %s, 1
  store i32 %n, ptr @state.llvm.1234
  ret i32 %m
}

define internal i32 @local_op(i32 %x) noinline {
  %r = xor i32 %x, 90
  ret i32 %r
}

define i32 @one(i32 %x) noinline {
  %a = call i32 @1(i32 %x)
  %b = call i32 @helper.llvm.1234(i32 %a)
  ret i32 %b
}

define i32 @two(i32 %x) noinline {
  %slot = getelementptr inbounds { [4 x ptr] }, ptr @vtable, i32 0, i32 0, i32 2
  %f = load ptr, ptr %slot
  %r = call i32 %f(i32 %x)
  %dslot = getelementptr inbounds { [4 x ptr] }, ptr @vtable, i32 0, i32 0, i32 3
  %dp = load ptr, ptr %dslot
  %d = load i32, ptr %dp
  %s = add i32 %r, %d
  ret i32 %s
}

define i32 @three(i32 %x) noinline {
  %f0 = load ptr, ptr @vtable
  %a = call i32 %f0(i32 %x)
  %e = load ptr, ptr getelementptr inbounds ([2 x ptr], ptr @ext_table, i64 0, i64 1)
  %f1 = load ptr, ptr %e
  %b = call i32 %f1(i32 %a)
  %c = call i32 @helper.llvm.1234(i32 3)
  %s = add i32 %b, %c
  ret i32 %s
}

define i32 @main() {
  %a = call i32 @one(i32 1)
  %b = call i32 @two(i32 2)
  %c = call i32 @three(i32 3)
  %f = load ptr, ptr @ext_table
  %d = call i32 %f(i32 4)
  call i32 (ptr, ...) @printf(ptr @fmt, i32 %a, i32 %b, i32 %c, i32 %d)
  %g = getelementptr inbounds [4 x i32], ptr @0, i64 0, i64 1
  %t = load i32, ptr %g
  %h = load ptr, ptr getelementptr inbounds ({ [4 x ptr] }, ptr @vtable, i32 0, i32 0, i32 1)
  %same = icmp eq ptr %h, @helper.llvm.1234
  %si = zext i1 %same to i32
  call i32 (ptr, ...) @printf(ptr @fmt2, i32 %t, i32 %si)
  ret i32 0
}
