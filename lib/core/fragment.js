// Fragment is an ordinary component (no primitive marker): it adds one depth level and a
// `component` span named "Fragment", exactly like the TypeScript SDK.
export function Fragment(props) {
  return props.children
}
