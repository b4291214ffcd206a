package main

import "github.com/omega-monitor/omega-monitor/internal/atomicfile"

// writeAtomic replaces the file at path with data, 0600, whole or not at
// all.
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o600) }
