module github.com/omega-monitor/omega-monitor

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/kevinburke/ssh_config v1.6.0
	golang.org/x/tools v0.52.0
	gotest.tools/v3 v3.5.2
)
