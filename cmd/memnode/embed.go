//go:build !memnode_lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/internal/datadir"
)

// modelsDir is where `memnode embed pull` installs models and the node loads them.
func modelsDir(env *cliEnv) string { return datadir.Dir(env.DataDir).Models() }

// embedModel is the configured model ID (setting embed_model), or the default.
func embedModel(env *cliEnv) string {
	if m := strings.TrimSpace(env.Settings.EmbedModel); m != "" {
		return m
	}
	return embed.DefaultModel
}

// buildEmbedder is node.Config.Embedder for the daemon: the configured model from
// <data dir>/models. A missing model yields embed.ErrNoModel, which the node reports as
// "off — no model" and looks for again, so a model pulled while it runs is picked up.
func buildEmbedder(env *cliEnv) func() (embed.Embedder, error) {
	cfg := embed.CybertronConfig{ModelsDir: modelsDir(env), Model: embedModel(env)}
	return func() (embed.Embedder, error) {
		c, err := embed.OpenCybertron(cfg)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

func cmdEmbed(ctx context.Context, env *cliEnv, args []string) int {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "pull":
		return cmdEmbedPull(ctx, env, args)
	case "status":
		return cmdEmbedStatus(ctx, env, args)
	case "help", "-h", "--help":
		fmt.Fprintln(env.Stdout, "usage: memnode embed pull [MODEL] [--force] [--verbose] | embed status [--wait]")
		return 0
	}
	return unknownSub(env, "embed", sub, "pull or status")
}

// cmdEmbedPull downloads and converts a model. Everything it prints goes to stderr:
// cybertron's own output is captured by embed.Pull, and stdout stays empty so that no
// byte of it can ever be mistaken for protocol output.
func cmdEmbedPull(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "embed pull", "embed pull [MODEL] [--force] [--verbose]")
	force := fs.Bool("force", false, "download again even when the model is installed")
	verbose := fs.Bool("verbose", false, "show the converter's output")
	pos, code, ok := fs.parse(args, 0, 1)
	if !ok {
		return code
	}
	model := embedModel(env)
	if len(pos) == 1 {
		model = pos[0]
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The data dir may not exist yet: create it private before models/ lands in it.
	if err := datadir.Secure(env.DataDir); err != nil {
		return fail(env, "embed pull: %v", err)
	}
	bar := &progressBar{w: env.Stderr}
	dir, err := embed.Pull(ctx, embed.PullConfig{
		ModelsDir:   modelsDir(env),
		Model:       model,
		HubURL:      env.Getenv("HF_ENDPOINT"),
		AccessToken: env.Getenv("HF_TOKEN"),
		Force:       *force,
		Progress:    bar.update,
		Logger:      logger,
	})
	bar.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fail(env, "embed pull: interrupted; nothing was installed")
		}
		return fail(env, "embed pull: %v (nothing was installed)", err)
	}
	fmt.Fprintf(env.Stderr, "model %s installed in %s\n", model, dir)
	if model != embedModel(env) {
		fmt.Fprintf(env.Stderr, "note: the node uses %s; set \"embed_model\": %q in %s to use this one\n",
			embedModel(env), model, datadir.Dir(env.DataDir).Settings())
	} else {
		fmt.Fprintln(env.Stderr, "a running node picks it up within seconds and embeds your observations in the background ('memnode status' shows progress)")
	}
	return 0
}

// progressBar draws embed.Pull's progress on one terminal line.
type progressBar struct {
	w     io.Writer
	phase string
	file  string
	drawn bool
}

func (p *progressBar) update(pr embed.Progress) {
	if pr.Phase != p.phase || pr.File != p.file {
		p.finish()
		p.phase, p.file = pr.Phase, pr.File
	}
	switch pr.Phase {
	case "download":
		const width = 30
		line := fmt.Sprintf("downloading %-22s %s", pr.File, mib(pr.Done))
		if pr.Total > 0 {
			fill := int(int64(width) * pr.Done / pr.Total)
			line = fmt.Sprintf("downloading %-22s [%s%s] %3d%% %s / %s", pr.File, strings.Repeat("=", fill),
				strings.Repeat(" ", width-fill), 100*pr.Done/pr.Total, mib(pr.Done), mib(pr.Total))
		}
		fmt.Fprintf(p.w, "\r%s", line)
		p.drawn = true
	case "convert":
		fmt.Fprint(p.w, "converting to cybertron's format…")
		p.drawn = true
	case "verify":
		fmt.Fprint(p.w, "verifying the converted model…")
		p.drawn = true
	}
}

func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func cmdEmbedStatus(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "embed status", "embed status [--wait]")
	wait := fs.Bool("wait", false, "follow the node's backfill: print its progress until every observation is embedded")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	model := embedModel(env)
	cfg := embed.CybertronConfig{ModelsDir: modelsDir(env), Model: model}
	fmt.Fprintf(env.Stdout, "model:       %s\n", model)
	fmt.Fprintf(env.Stdout, "directory:   %s\n", cfg.ModelDir())
	if _, _, err := embed.VerifyModelDir(cfg.ModelDir()); err != nil {
		fmt.Fprintln(env.Stdout, "installed:   no ('memnode embed pull' installs it; search uses FTS only until then)")
	} else {
		fmt.Fprintln(env.Stdout, "installed:   yes")
	}
	if h, err := health(ctx, env); err == nil && h.Ready {
		var st apitype.Status
		if err := apiGet(ctx, env, "/api/status", &st); err == nil {
			fmt.Fprintf(env.Stdout, "node:        %s\n", st.Embed.State)
			if !*wait {
				return 0
			}
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			poll := func(ctx context.Context) (apitype.EmbedStatus, error) {
				var st apitype.Status
				err := apiGet(ctx, env, "/api/status", &st)
				return st.Embed, err
			}
			if err := waitEmbedded(ctx, env.Stderr, poll, tick.C, time.Now); err != nil {
				return fail(env, "embed status: %v", err)
			}
			return 0
		}
	}
	fmt.Fprintln(env.Stdout, "node:        not running")
	return 0
}

// waitEmbedded polls the node's embedding progress at every tick and draws it on one line
// (count, share, rate) until every observation has a vector (or could not get one).
func waitEmbedded(ctx context.Context, w io.Writer, poll func(context.Context) (apitype.EmbedStatus, error),
	tick <-chan time.Time, now func() time.Time) error {
	var first apitype.EmbedStatus
	var t0 time.Time
	drawn := false
	for {
		st, err := poll(ctx)
		if err != nil {
			if drawn {
				fmt.Fprintln(w)
			}
			return err
		}
		if st.Model == "" {
			if drawn {
				fmt.Fprintln(w)
			}
			return fmt.Errorf("the node is not embedding (%s)", st.State)
		}
		if t0.IsZero() || st.Model != first.Model {
			first, t0 = st, now()
		}
		line := fmt.Sprintf("embedding %s: %d/%d", st.Model, st.Embedded, st.Total)
		if st.Total > 0 {
			line += fmt.Sprintf(" (%d%%)", 100*st.Embedded/st.Total)
		}
		if el := now().Sub(t0).Seconds(); el > 0 && st.Embedded > first.Embedded {
			line += fmt.Sprintf(", %.1f observations/s", float64(st.Embedded-first.Embedded)/el)
		}
		if st.Failed > 0 {
			line += fmt.Sprintf(", %d could not be embedded", st.Failed)
		}
		fmt.Fprintf(w, "\r%s", line)
		drawn = true
		if st.Embedded+st.Failed >= st.Total {
			fmt.Fprintln(w, " — done")
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return ctx.Err()
		case <-tick:
		}
	}
}
