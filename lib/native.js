// The only module that touches the generated napi loader. Everything else imports from here,
// so the boundary is one line to find.
export { NativeEvaluation, panicForTest, primitiveKinds } from "../native/binding.js"
