; HAZARD 16: a local constant whose address is only insignificant inside the module
; (local_unnamed_addr, not unnamed_addr): a splitter that gives each reader its own copy
; changes what code outside the module sees. support/main_local_unnamed_addr.c compares the
; address that two functions return; MTPC-PLACE puts them in different partitions.
; MTPC-MAIN: support/main_local_unnamed_addr.c
; MTPC-PLACE: 0=lua_first 1=lua_second
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@lua_table = internal local_unnamed_addr constant [4 x i32] [i32 1, i32 2, i32 3, i32 4], align 16

define ptr @lua_first() noinline {
  ret ptr @lua_table
}

define ptr @lua_second() noinline {
  ret ptr @lua_table
}

define i32 @lua_sum(i32 %i) noinline {
  %p = getelementptr inbounds [4 x i32], ptr @lua_table, i64 0, i32 %i
  %v = load i32, ptr %p, align 4
  ret i32 %v
}
