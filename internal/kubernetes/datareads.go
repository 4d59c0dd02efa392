package kubernetes

import (
	"slices"
	"text/template"
	"text/template/parse"
)

// projectDataFields are the fields of TemplateData whose values the plan's sample render can only
// make up: the project's annotations (the sample has Rill's keys with placeholder values) and the
// runtime's name (empty in the sample). Every other field's value is the same, or of the same kind,
// for every runtime.
var projectDataFields = []string{"Annotations", "Name"}

// projectDataNodes finds the nodes of a template set whose value, or whether they run at all, may
// depend on project data (projectDataFields): a pipeline that reads such a field (of the dot, $, a
// variable or a map holding the data, as in (dict "root" $)), a variable that holds such a value (set
// in it, or in a dict it holds, with Sprig's set), the dot inside a with or range over one, the dot
// and $ of a template called with one, and everything inside an if, with or range whose condition
// reads it (the sample may take the branch the project's data would not). An execution error at such
// a node may be the sample's alone (failedOnTheData).
//
// It errs towards project data, which makes a warning of an error, never an error of a warning (that
// would block every plan): a variable that may ever hold such a value is taken to hold one everywhere
// in its template, whatever the scope or the order of the actions (a loop may assign it after a use),
// and any field so named is taken for the data's.
type projectDataNodes struct {
	set *template.Template
	// at holds the nodes found, by their place as text/template's execution errors name it
	// ("<file>:<line>:<col>", parse.Tree.ErrorContext's).
	at map[string]bool
	// walked holds the templates walked, by name, whether their dot came from project data and
	// whether project data chose to call them.
	walked map[walkedTemplate]bool
}

type walkedTemplate struct {
	name              string
	dotFromData, ctrl bool
}

// newProjectDataNodes analyses the templates named roots (each executed with the runtime's data as
// its dot) and those they call.
func newProjectDataNodes(set *template.Template, roots []string) *projectDataNodes {
	a := &projectDataNodes{set: set, at: map[string]bool{}, walked: map[walkedTemplate]bool{}}
	for _, name := range roots {
		a.template(name, false, false)
	}
	return a
}

// has reports whether the node at place ("<file>:<line>:<col>") may depend on project data.
func (a *projectDataNodes) has(place string) bool { return a.at[place] }

// template walks the template called name, with its dot from project data or not; ctrl: project
// data chose to run it, so every node of it depends on that data.
func (a *projectDataNodes) template(name string, dotFromData, ctrl bool) {
	key := walkedTemplate{name, dotFromData, ctrl}
	t := a.set.Lookup(name)
	if a.walked[key] || t == nil || t.Tree == nil || t.Root == nil {
		return
	}
	a.walked[key] = true
	// $ is the template's first dot. Walked again until nothing new is found, for a variable assigned
	// after a use (in a loop).
	vars := map[string]bool{"$": dotFromData}
	for {
		before := len(a.at) + len(vars)
		a.list(t.Tree, t.Root, dotFromData, ctrl, vars)
		if len(a.at)+len(vars) == before {
			return
		}
	}
}

// list walks the nodes of a list; vars holds the template's variables that may hold project data.
func (a *projectDataNodes) list(tree *parse.Tree, l *parse.ListNode, dotFromData, ctrl bool, vars map[string]bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			a.pipe(tree, n, n.Pipe, dotFromData, ctrl, vars)
		case *parse.IfNode:
			a.branch(tree, n, &n.BranchNode, dotFromData, ctrl, vars, false)
		case *parse.WithNode:
			a.branch(tree, n, &n.BranchNode, dotFromData, ctrl, vars, true)
		case *parse.RangeNode:
			a.branch(tree, n, &n.BranchNode, dotFromData, ctrl, vars, true)
		case *parse.TemplateNode:
			fromData := a.pipe(tree, n, n.Pipe, dotFromData, ctrl, vars)
			a.template(n.Name, fromData, ctrl)
		}
	}
}

// branch walks an if, with or range: its pipeline, then its list (with the dot the pipeline's value
// when setsDot) and its else list (the dot unchanged), both run as the pipeline's value chooses.
func (a *projectDataNodes) branch(tree *parse.Tree, n parse.Node, b *parse.BranchNode, dotFromData, ctrl bool, vars map[string]bool, setsDot bool) {
	fromData := a.pipe(tree, n, b.Pipe, dotFromData, ctrl, vars)
	listDot := dotFromData
	if setsDot {
		listDot = fromData
	}
	a.list(tree, b.List, listDot, ctrl || fromData, vars)
	a.list(tree, b.ElseList, dotFromData, ctrl || fromData, vars)
}

// pipe reports whether a pipeline's value may come from project data. When it may, or when project
// data chose to run it (ctrl), its nodes and the action holding it (owner) are recorded, and so are
// the variables it declares or assigns and those it passes to a function (which may store the value
// in them: set $m "k" .Annotations.k).
func (a *projectDataNodes) pipe(tree *parse.Tree, owner parse.Node, p *parse.PipeNode, dotFromData, ctrl bool, vars map[string]bool) bool {
	if p == nil {
		return false
	}
	fromData := readsProjectData(p, dotFromData, vars)
	if fromData || ctrl {
		for _, v := range p.Decl {
			vars[v.Ident[0]] = true
		}
		for _, c := range p.Cmds {
			for _, arg := range c.Args {
				if v, ok := arg.(*parse.VariableNode); ok && v.Ident[0] != "$" {
					vars[v.Ident[0]] = true
				}
			}
		}
		a.mark(tree, owner)
		a.mark(tree, p)
	}
	return fromData
}

// mark records n and every node inside it.
func (a *projectDataNodes) mark(tree *parse.Tree, n parse.Node) {
	if n == nil {
		return
	}
	place, _ := tree.ErrorContext(n)
	a.at[place] = true
	switch n := n.(type) {
	case *parse.PipeNode:
		for _, v := range n.Decl {
			a.mark(tree, v)
		}
		for _, c := range n.Cmds {
			a.mark(tree, c)
		}
	case *parse.CommandNode:
		for _, arg := range n.Args {
			a.mark(tree, arg)
		}
	case *parse.ChainNode:
		a.mark(tree, n.Node)
	}
}

// readsProjectData reports whether node n may read project data: a field of projectDataFields
// anywhere in a chain, a variable that may hold such data ($ included), or the dot when it may.
func readsProjectData(n parse.Node, dotFromData bool, vars map[string]bool) bool {
	switch n := n.(type) {
	case *parse.PipeNode:
		for _, c := range n.Cmds {
			if readsProjectData(c, dotFromData, vars) {
				return true
			}
		}
	case *parse.CommandNode:
		for _, arg := range n.Args {
			if readsProjectData(arg, dotFromData, vars) {
				return true
			}
		}
	case *parse.ChainNode:
		return readsProjectData(n.Node, dotFromData, vars) || namesProjectData(n.Field)
	case *parse.FieldNode:
		return dotFromData || namesProjectData(n.Ident)
	case *parse.DotNode:
		return dotFromData
	case *parse.VariableNode:
		return vars[n.Ident[0]] || namesProjectData(n.Ident[1:])
	}
	return false
}

// namesProjectData reports whether a chain of field names has one of projectDataFields.
func namesProjectData(fields []string) bool {
	return slices.ContainsFunc(fields, func(f string) bool { return slices.Contains(projectDataFields, f) })
}
