#!/usr/bin/env python3
"""Writes a large C++ program for tools/bench/symbolicate: thousands of functions in namespaces and
templates, with static inline helpers so -O2 produces deep inline chains."""
import random, sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
rng = random.Random(7)
out = ["#include <cstdio>", "#include <vector>", "namespace gen {"]
out.append("template <typename T> struct Box { T v; inline T twice() const { return v * 2 + 1; } };")
for i in range(n):
    out.append(f"static inline int h{i}(int x) {{ Box<int> b{{x ^ {rng.randint(1, 999)}}}; return b.twice() + (x >> {i % 7}); }}")
for i in range(n):
    calls = " + ".join(f"h{rng.randrange(n)}(a + {k})" for k in range(rng.randint(2, 5)))
    out.append(f"__attribute__((noinline)) int f{i}(int a) {{ if (a > {rng.randint(10, 99999)}) return {calls}; return a * {i}; }}")
out.append("}  // namespace gen")
out.append("int main(int argc, char **) { int s = 0;")
for i in range(0, n, max(1, n // 200)):
    out.append(f"  s += gen::f{i}(argc * {i});")
out.append('  std::printf("%d\\n", s); return 0; }')
print("\n".join(out))
