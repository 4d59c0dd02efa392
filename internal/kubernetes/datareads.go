package kubernetes

import (
	"slices"
	"text/template"
	"text/template/parse"
)

// annotationNodes finds the nodes of a template set whose value may come from the project's
// annotations: a pipeline that reads a field Annotations (of the dot, $, a variable or a map holding
// the data, as in (dict "root" $)), a variable that holds such a value, the dot inside a with or range
// over one, or the dot and $ of a template called with one. The sample render knows the annotations'
// keys only as Rill's admin service sets them, and none of their values, so an execution error at
// such a node may be the sample's alone (failedOnTheData). Every other value has a type that no
// runtime's data changes.
//
// It errs towards the annotations, which makes a warning of an error, never an error of a warning
// (that would block every plan): a variable that may ever hold an annotation's value is taken to
// hold one everywhere in its template, whatever the scope or the order of the actions (a loop may
// assign it after a use), and any field named Annotations is taken for the data's.
type annotationNodes struct {
	set *template.Template
	// at holds the nodes found, by the name of the file they were parsed from (parse.Tree.ParseName,
	// which text/template's execution errors name) and their byte offset in it.
	at map[nodePlace]bool
	// walked holds the templates walked, by name and whether their dot came from the annotations.
	walked map[walkedTemplate]bool
}

type nodePlace struct {
	file string
	pos  parse.Pos
}

type walkedTemplate struct {
	name       string
	dotFromAnn bool
}

// newAnnotationNodes analyses the templates named roots (each executed with the runtime's data as
// its dot) and those they call.
func newAnnotationNodes(set *template.Template, roots []string) *annotationNodes {
	a := &annotationNodes{set: set, at: map[nodePlace]bool{}, walked: map[walkedTemplate]bool{}}
	for _, name := range roots {
		a.template(name, false)
	}
	return a
}

// has reports whether the node that starts at byte offset pos of file may hold the annotations' values.
func (a *annotationNodes) has(file string, pos int) bool {
	return a.at[nodePlace{file, parse.Pos(pos)}]
}

func (a *annotationNodes) template(name string, dotFromAnn bool) {
	key := walkedTemplate{name, dotFromAnn}
	t := a.set.Lookup(name)
	if a.walked[key] || t == nil || t.Tree == nil || t.Root == nil {
		return
	}
	a.walked[key] = true
	// $ is the template's first dot. Walked again until nothing new is found, for a variable assigned
	// after a use (in a loop).
	vars := map[string]bool{"$": dotFromAnn}
	for {
		before := len(a.at) + len(vars)
		a.list(t.Tree, t.Root, dotFromAnn, vars)
		if len(a.at)+len(vars) == before {
			return
		}
	}
}

// list walks the nodes of a list; vars holds the template's variables that may hold the
// annotations' values.
func (a *annotationNodes) list(tree *parse.Tree, l *parse.ListNode, dotFromAnn bool, vars map[string]bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			a.pipe(tree, n, n.Pipe, dotFromAnn, vars)
		case *parse.IfNode:
			a.branch(tree, n, &n.BranchNode, dotFromAnn, vars, false)
		case *parse.WithNode:
			a.branch(tree, n, &n.BranchNode, dotFromAnn, vars, true)
		case *parse.RangeNode:
			a.branch(tree, n, &n.BranchNode, dotFromAnn, vars, true)
		case *parse.TemplateNode:
			fromAnn := false
			if n.Pipe != nil {
				fromAnn = a.pipe(tree, n, n.Pipe, dotFromAnn, vars)
			}
			a.template(n.Name, fromAnn)
		}
	}
}

// branch walks an if, with or range: its pipeline, then its list (with the dot the pipeline's value
// when setsDot), then its else list with the dot unchanged.
func (a *annotationNodes) branch(tree *parse.Tree, n parse.Node, b *parse.BranchNode, dotFromAnn bool, vars map[string]bool, setsDot bool) {
	fromAnn := a.pipe(tree, n, b.Pipe, dotFromAnn, vars)
	listDot := dotFromAnn
	if setsDot {
		listDot = fromAnn
	}
	a.list(tree, b.List, listDot, vars)
	a.list(tree, b.ElseList, dotFromAnn, vars)
}

// pipe reports whether a pipeline's value may come from the annotations; when it may, its nodes and
// the action holding it (owner) are recorded, and so are the variables it declares or assigns.
func (a *annotationNodes) pipe(tree *parse.Tree, owner parse.Node, p *parse.PipeNode, dotFromAnn bool, vars map[string]bool) bool {
	if p == nil {
		return false
	}
	fromAnn := readsAnnotations(p, dotFromAnn, vars)
	if fromAnn {
		for _, v := range p.Decl {
			vars[v.Ident[0]] = true
		}
		a.mark(tree, owner)
		a.mark(tree, p)
	}
	return fromAnn
}

// mark records n and every node inside it.
func (a *annotationNodes) mark(tree *parse.Tree, n parse.Node) {
	if n == nil {
		return
	}
	a.at[nodePlace{tree.ParseName, n.Position()}] = true
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

// readsAnnotations reports whether node n may read the annotations: a field Annotations anywhere in
// a chain, a variable that may hold them ($ included), or the dot when it may.
func readsAnnotations(n parse.Node, dotFromAnn bool, vars map[string]bool) bool {
	switch n := n.(type) {
	case *parse.PipeNode:
		for _, c := range n.Cmds {
			if readsAnnotations(c, dotFromAnn, vars) {
				return true
			}
		}
	case *parse.CommandNode:
		for _, arg := range n.Args {
			if readsAnnotations(arg, dotFromAnn, vars) {
				return true
			}
		}
	case *parse.ChainNode:
		return readsAnnotations(n.Node, dotFromAnn, vars) || slices.Contains(n.Field, "Annotations")
	case *parse.FieldNode:
		return dotFromAnn || slices.Contains(n.Ident, "Annotations")
	case *parse.DotNode:
		return dotFromAnn
	case *parse.VariableNode:
		return vars[n.Ident[0]] || slices.Contains(n.Ident[1:], "Annotations")
	}
	return false
}
