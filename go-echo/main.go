// SPDX-License-Identifier: GPL-2.0
//
// go-echo-server: a TCP echo server as Go's community writes one: net.Listen,
// a goroutine per connection, a read and write loop through the goroutine's
// own buffer. Nothing here is tuned for the bench: GOMAXPROCS is the
// runtime's (the CPUs the process may run on), and TCP_NODELAY is Go's
// default on every TCP connection.
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

const prog = "go-echo-server"

type options struct {
	addr       string
	port       int
	bufferSize int
	threads    int
	verbose    bool
}

const usage = `Usage: go-echo-server [options]
A TCP echo server as Go's community writes one: a goroutine per connection,
every byte received is sent back.

  -p, --port N         port to listen on (default 12345)
      --addr ADDR      IPv4 address to listen on (default 127.0.0.1: this
                       machine only); 0.0.0.0 is every interface, open to any
                       host that can reach this machine
      --threads N      GOMAXPROCS, 1 to 256 (default: the runtime's, the
                       CPUs this process may run on)
      --buffer-size BYTES  each connection's buffer, the most one read takes
                       (1024 to 67108864, default 262144)
  -v, --verbose        log every connection and error to stderr
  -h, --help           this text

SIGINT or SIGTERM stops it. Exit status: 0 after a clean stop, 1 when it
cannot serve (port busy, no privileges), 2 on bad usage.
`

// usageError ends the process as every server of the suite does on bad usage.
func usageError(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s: %s\nTry '%s --help'.\n", prog, fmt.Sprintf(format, a...), prog)
	os.Exit(2)
}

func number(name, s string, lo, hi int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		usageError("%s: '%s' is not a number", name, s)
	}
	if n < lo || n > hi {
		usageError("%s: %d is out of range [%d, %d]", name, n, lo, hi)
	}
	return n
}

func parse(args []string) options {
	o := options{addr: "127.0.0.1", port: 12345, bufferSize: 256 * 1024}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() string {
			if i+1 >= len(args) {
				usageError("%s needs a value", a)
			}
			i++
			return args[i]
		}
		switch a {
		case "-h", "--help":
			fmt.Print(usage)
			os.Exit(0)
		case "-v", "--verbose":
			o.verbose = true
		case "-p", "--port":
			o.port = number(a, value(), 1, 65535)
		case "--addr":
			s := value()
			ip, err := netip.ParseAddr(s)
			if err != nil || !ip.Is4() {
				usageError("--addr: '%s' is not an IPv4 address (a dotted quad such as 127.0.0.1 or 0.0.0.0)", s)
			}
			o.addr = s
		case "--threads":
			o.threads = number(a, value(), 1, 256)
		case "--buffer-size":
			o.bufferSize = number(a, value(), 1024, 64<<20)
		default:
			if len(a) > 0 && a[0] == '-' {
				usageError("unknown option '%s'", a)
			}
			usageError("unexpected argument '%s'", a)
		}
	}
	return o
}

// echo sends back every byte until the client's EOF, then shuts its own
// side down, so the client reads its echo and then EOF.
func echo(c *net.TCPConn, size int, verbose bool) {
	defer c.Close()
	buf := make([]byte, size)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				if verbose {
					fmt.Fprintf(os.Stderr, "%s: %v: %v\n", prog, c.RemoteAddr(), werr)
				}
				return
			}
		}
		if errors.Is(err, io.EOF) {
			c.CloseWrite()
			if verbose {
				fmt.Fprintf(os.Stderr, "%s: %v: closed\n", prog, c.RemoteAddr())
			}
			return
		}
		if err != nil {
			if verbose {
				fmt.Fprintf(os.Stderr, "%s: %v: %v\n", prog, c.RemoteAddr(), err)
			}
			return
		}
	}
}

func main() {
	o := parse(os.Args[1:])
	if o.threads > 0 {
		runtime.GOMAXPROCS(o.threads)
	}
	where := net.JoinHostPort(o.addr, strconv.Itoa(o.port))
	ln, err := net.Listen("tcp4", where)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot listen on %s port %d: %v\n", prog, o.addr, o.port, err)
		os.Exit(1)
	}
	// Before the line that says it listens: whoever reads that line may
	// send SIGTERM at once, and must see the clean stop (exit 0).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		ln.Close()
	}()
	if o.addr == "0.0.0.0" {
		fmt.Fprintf(os.Stderr, "%s: warning: listening on 0.0.0.0 (every interface): any host that can reach this machine can connect\n", prog)
	}
	fmt.Fprintf(os.Stderr, "%s: listening on %s port %d (threads=%d buffer_size=%d)\n",
		prog, o.addr, o.port, runtime.GOMAXPROCS(0), o.bufferSize)

	var pause time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, say (EMFILE): the client waits in the
			// backlog until a connection closes. Back off rather than
			// spin, as net/http's Serve does: 5 ms, doubling, at most 1 s.
			if o.verbose {
				fmt.Fprintf(os.Stderr, "%s: accept: %v\n", prog, err)
			}
			pause *= 2
			if pause == 0 {
				pause = 5 * time.Millisecond
			} else if pause > time.Second {
				pause = time.Second
			}
			time.Sleep(pause)
			continue
		}
		pause = 0
		if o.verbose {
			fmt.Fprintf(os.Stderr, "%s: %v: accepted\n", prog, c.RemoteAddr())
		}
		go echo(c.(*net.TCPConn), o.bufferSize, o.verbose)
	}
}
