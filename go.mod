module github.com/omega-monitor/omega-monitor

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/kevinburke/ssh_config v1.6.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	gotest.tools/v3 v3.5.2 // indirect
)
