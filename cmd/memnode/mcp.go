package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/memnode/memnode/mcpserver"
)

// cmdMCP serves MCP on stdin/stdout for the IDE. stdout carries JSON-RPC only: every log
// line goes to stderr.
func cmdMCP(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "mcp", "mcp [-v]")
	verbose := fs.Bool("v", false, "log requests to stderr")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	project := "unknown"
	if cwd, err := os.Getwd(); err == nil {
		project = projectName(cwd)
	}
	srv := mcpserver.New(mcpserver.Config{Memory: newNodeConn(env), DefaultProject: project, Version: version, Logger: log})
	if err := srv.Run(ctx, io.NopCloser(env.Stdin), nopWriteCloser{env.Stdout}); err != nil {
		log.Error("mcp server stopped", "err", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
