// Package sandboxnet is an audit sandbox's one way to the agent's API, as
// the two verbs of omega-monitor-sandbox run it. An auditor inside
// bubblewrap has no network of its own (--unshare-net). Outside, Proxy
// serves an HTTP proxy on a unix socket that is bound into the sandbox,
// and connects to the allowed endpoints and to nothing else. Inside,
// Forward runs first: it listens on the loopback address the agent's
// HTTPS_PROXY and HTTP_PROXY name, passes each connection to the socket,
// and runs the agent. Claude Code, Codex and Gemini CLI each send their API
// requests through HTTPS_PROXY (a CONNECT tunnel) or, to a plain http://
// base URL, through HTTP_PROXY.
//
// Package auditrun plans all of it (the endpoints, the socket, the
// addresses, the helper's command lines) and imports nothing of this
// package: only omega-monitor-sandbox does. This package links net/http and
// crypto/tls, whose size and package initialisation would otherwise cost
// every start of omega-monitor, each poll's tick among them.
package sandboxnet
