package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestSandboxNetworkStaysOutOfThisBinary: this binary links no HTTP and no
// TLS. Every start pays for what it links (net/http and crypto/tls nearly
// doubled it and cost each start about 0.6 ms), and the poll loop starts it
// several times a poll: the audit sandbox's proxy is omega-monitor-sandbox,
// the MCP server omega-monitor-mcp. A package that brings them back fails
// here, with the imports it came by. The answer receiver's Telegram client
// is omega-monitor-relay's alone, and the notification library
// omega-monitor-notify's, for the same reason.
func TestSandboxNetworkStaysOutOfThisBinary(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	// Each package with its imports; go list lists this one last.
	imports := map[string][]string{}
	var root string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		root, imports[f[0]] = f[0], f[1:]
	}
	for _, heavy := range []string{"net/http", "crypto/tls", "github.com/go-telegram/bot", "github.com/nicholas-fedor/shoutrrr/pkg/router", "github.com/omega-monitor/omega-monitor/internal/notify", "github.com/omega-monitor/omega-monitor/internal/relay/receiver"} {
		if _, ok := imports[heavy]; ok {
			t.Errorf("omega-monitor links %s: %s", heavy, strings.Join(importPath(imports, root, heavy), " -> "))
		}
	}
}

// importPath returns a shortest chain of imports from one package to
// another.
func importPath(imports map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return path
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
