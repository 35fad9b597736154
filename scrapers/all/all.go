// Package all registers every gpuprice source by importing it.
package all
