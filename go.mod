module github.com/omega-monitor/omega-monitor

go 1.26.0

require (
	github.com/go-telegram/bot v1.19.0
	github.com/google/go-cmp v0.7.0
	github.com/kevinburke/ssh_config v1.6.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/nicholas-fedor/shoutrrr v0.13.2
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/tools v0.52.0
	gotest.tools/v3 v3.5.2
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.39.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
