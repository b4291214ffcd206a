package sandboxnet

import (
	"fmt"
	"io"
	"net"
)

// Forward runs inside the sandbox, before the agent: it listens on the TCP
// address addr and passes each connection to the unix socket sock, until
// the listener it returns is closed.
func Forward(addr, sock string) (io.Closer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandboxnet: %w", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer up.Close()
				splice(c, up)
			}()
		}
	}()
	return ln, nil
}

// splice copies a to b and b to a until both are done, passing on each
// side's end of writing.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}
