//go:build wasm

package main

import "unsafe"

// The reactor's interface (built with -buildmode=c-shared; Node calls _initialize once, then these
// as often as it likes). Requests and responses are bytes in linear memory, held by the globals
// below so the garbage collector keeps them (Go's collector does not move objects):
//   p = input(n)      a buffer of n bytes for the request, at address p; the caller writes the JSON there
//   n = validate()    validates the request (ValidateAll); the response is n bytes at output()
//   p = output()      address of the last response
//   n = version()     the Kubernetes version, n bytes at output()

var request, response []byte

//go:wasmexport input
func input(n uint32) uint32 {
	request = make([]byte, n+1) // +1: a zero-length request still has an address
	return uint32(uintptr(unsafe.Pointer(&request[0])))
}

//go:wasmexport validate
func validate() uint32 {
	response = ValidateAll(request[:len(request)-1])
	request = nil
	return uint32(len(response))
}

//go:wasmexport output
func output() uint32 {
	if len(response) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&response[0])))
}

//go:wasmexport version
func version() uint32 {
	response = []byte(KubernetesVersion())
	return uint32(len(response))
}
