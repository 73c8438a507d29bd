package memory

import (
	"path"
	"strings"
)

// Policy is the one answer to "is this recorded": the hook asks it before sending and the
// node asks it again on ingest (defence in depth re-runs the same function).
type Policy struct {
	// ExcludedProjects are path.Match globs on the project name.
	ExcludedProjects []string
	// SkipTools are tool names (case-insensitive) whose calls are not recorded.
	SkipTools []string
}

// ProjectExcluded reports whether nothing of project is recorded: the compressor's own
// project never is, whatever the globs.
func (p Policy) ProjectExcluded(project string) bool {
	if project == CompressorProject {
		return true
	}
	for _, g := range p.ExcludedProjects {
		if ok, err := path.Match(g, project); err == nil && ok {
			return true
		}
	}
	return false
}

// housekeeping are the canonical (Claude Code's) names of an agent's bookkeeping tools:
// loading deferred tools, todo lists, background shells, listing MCP resources. This is the
// one list: the adapters mark such calls (platform.Input.Bookkeeping), the offline
// compressor skips them and ToolSkipped says so, whatever skip_tools holds.
var housekeeping = [...]string{"ToolSearch", "TodoWrite", "TodoRead", "BashOutput", "KillShell", "KillBash", "ListMcpResourcesTool"}

// Housekeeping reports whether tool (a canonical tool name, any case) is an agent's
// bookkeeping tool, whose calls carry no memory worth keeping.
func Housekeeping(tool string) bool {
	for _, t := range housekeeping {
		if strings.EqualFold(t, tool) {
			return true
		}
	}
	return false
}

// ToolSkipped reports whether calls of tool are not recorded: a housekeeping tool, or one
// the settings skip.
func (p Policy) ToolSkipped(tool string) bool {
	if Housekeeping(tool) {
		return true
	}
	for _, t := range p.SkipTools {
		if strings.EqualFold(t, tool) {
			return true
		}
	}
	return false
}

// Recordable reports whether a call of tool in project is recorded.
func (p Policy) Recordable(tool, project string) bool {
	return !p.ProjectExcluded(project) && !p.ToolSkipped(tool)
}

// CompressorProject is the project of the directory agent CLIs run in when memnode uses
// them as compressors (ai/llm's CLI provider, in <data dir>/memnode-compressor). Nothing of
// it is ever recorded: a compression call that reached the hooks despite MEMNODE_DISABLED
// and the CLI's no-hooks flags would otherwise become a session about compressing.
const CompressorProject = "memnode-compressor"
