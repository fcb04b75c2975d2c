// Generators of the two benchmark programs that are too big to keep in the repository:
// a BUILD-like file with one big dict literal, and a deep chain of distinct functions.
// Both are deterministic, so every run (and both interpreters) see the same text.

/** A generated BUILD-like module: one big dict literal of targets, then a checksum over it. */
export function bigDictProgram(targets = 4000) {
  const lines = ['# Generated: a BUILD-like dict literal of many targets.', 'TARGETS = {'];
  for (let i = 0; i < targets; i++) {
    const srcs = Array.from({ length: 8 }, (_, j) => `"src/pkg${i % 97}/file_${i}_${j}.cc"`).join(', ');
    const deps = Array.from({ length: 4 }, (_, j) => `"//pkg${(i * 7 + j) % 211}:lib${(i + j) % 53}"`).join(', ');
    lines.push(
      `    "t${i}": {"name": "t${i}", "kind": "cc_library", "srcs": [${srcs}], "hdrs": ["include/t${i}.h"],`,
      `        "deps": [${deps}], "copts": ["-O2", "-DLEVEL=${i % 5}"], "linkstatic": ${i % 2 ? 'True' : 'False'},`,
      `        "visibility": ["//visibility:public"], "tags": ["t${i % 13}", "gen"], "size": ${i % 1000}},`,
    );
  }
  lines.push('}', '', 'def checksum():', '    total = 0', '    for name, t in TARGETS.items():');
  lines.push('        total += len(name) + len(t["srcs"]) + len(t["deps"][0]) + t["size"]');
  lines.push('        if t["linkstatic"]:', '            total += 1', '    return total', '', 'print(checksum())', '');
  return lines.join('\n');
}

/** A chain of distinct functions f0 -> f1 -> ... -> fN (no recursion), called many times. */
export function callChainProgram(depth = 250, calls = 5000) {
  const lines = ['# Generated: a deep chain of distinct functions (Starlark forbids recursion).'];
  for (let i = 0; i < depth; i++) {
    const next = i + 1 < depth ? `f${i + 1}(x + ${i % 17}, k)` : 'x * k';
    lines.push(`def f${i}(x, k):`, `    return ${next} % 1000003`, '');
  }
  lines.push('def main():', '    total = 0', `    for i in range(${calls}):`, '        total = (total + f0(i, 3)) % 1000000007');
  lines.push('    return total', '', 'print(main())', '');
  return lines.join('\n');
}
