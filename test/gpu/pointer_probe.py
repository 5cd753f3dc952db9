#!/usr/bin/env python3
# File: test/gpu/pointer_probe.py
#
# What the driver answers for the pointer questions numtrace asks before it
# reads a buffer (issue 18, item 2; shim/driver/driver_range_oracle.h):
# cuPointerGetAttributes RANGE_START_ADDR / RANGE_SIZE / MAPPED and
# cuMemGetAddressRange, for a cuMemAlloc buffer, a stream-ordered pool
# allocation (cuMemAllocAsync), a VMM reservation mapped in part, and a pool
# pointer after cuMemFreeAsync. Straight ctypes over libcuda.so.1: no torch,
# no numtrace. One "probe KIND: ..." line per case; exit 77 without a GPU.
# Never run on a GPU yet: a crash or an odd answer here is itself the answer.
import ctypes
import sys

CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11
CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12
CU_POINTER_ATTRIBUTE_MAPPED = 13


def main():
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print(f"no driver: {e}", file=sys.stderr)
        return 77
    u64, sz = ctypes.c_uint64, ctypes.c_size_t

    def check(what, r):
        if r != 0:
            raise RuntimeError(f"{what} returned {r}")

    if cu.cuInit(0) != 0:
        print("cuInit failed", file=sys.stderr)
        return 77
    dev = ctypes.c_int()
    check("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
    ctx = ctypes.c_void_p()
    check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))

    def ask(kind, ptr):
        start, size, mapped = u64(0), sz(0), ctypes.c_uint(0)
        attrs = (ctypes.c_int * 3)(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                   CU_POINTER_ATTRIBUTE_MAPPED)
        data = (ctypes.c_void_p * 3)(ctypes.addressof(start), ctypes.addressof(size), ctypes.addressof(mapped))
        r = cu.cuPointerGetAttributes(3, attrs, data, u64(ptr))
        base, piece = u64(0), sz(0)
        r2 = cu.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(piece), u64(ptr))
        print(f"probe {kind}: ptr=+{ptr - (start.value or ptr):#x} attrs={r} start={start.value:#x} "
              f"size={size.value} mapped={mapped.value} addressrange={r2} base={base.value:#x} "
              f"piece={piece.value}")

    p = u64(0)
    check("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(p), sz(1 << 20)))
    ask("cuMemAlloc 1MiB +4KiB", p.value + 4096)
    q = u64(0)
    check("cuMemAllocAsync", cu.cuMemAllocAsync(ctypes.byref(q), sz(1 << 20), None))
    check("cuStreamSynchronize", cu.cuStreamSynchronize(None))
    ask("cuMemAllocAsync 1MiB +4KiB", q.value + 4096)
    check("cuMemFreeAsync", cu.cuMemFreeAsync(q, None))
    check("cuStreamSynchronize", cu.cuStreamSynchronize(None))
    ask("freed pool pointer", q.value + 4096)

    # VMM: reserve 64 MiB, map only the first granule.
    class Location(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    class Prop(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", Location),
                    ("win32HandleMetaData", ctypes.c_void_p), ("compressionType", ctypes.c_ubyte),
                    ("gpuDirectRDMACapable", ctypes.c_ubyte), ("usage", ctypes.c_ushort),
                    ("reserved", ctypes.c_ubyte * 4)]

    class Access(ctypes.Structure):
        _fields_ = [("location", Location), ("flags", ctypes.c_int)]

    prop = Prop()
    prop.type = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = 1  # CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = dev.value
    gran = sz(0)
    check("cuMemGetAllocationGranularity", cu.cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop), 0))
    reserve = 64 << 20
    va = u64(0)
    check("cuMemAddressReserve", cu.cuMemAddressReserve(ctypes.byref(va), sz(reserve), sz(0), u64(0), u64(0)))
    handle = u64(0)
    check("cuMemCreate", cu.cuMemCreate(ctypes.byref(handle), gran, ctypes.byref(prop), u64(0)))
    check("cuMemMap", cu.cuMemMap(va, gran, sz(0), handle, u64(0)))
    acc = Access()
    acc.location.type = 1
    acc.location.id = dev.value
    acc.flags = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    check("cuMemSetAccess", cu.cuMemSetAccess(va, gran, ctypes.byref(acc), sz(1)))
    ask("VMM mapped granule +4KiB", va.value + 4096)
    ask("VMM reserved, unmapped +32MiB", va.value + (32 << 20))
    print(f"probe granularity: {gran.value}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"probe error: {e}")
        sys.exit(1)
