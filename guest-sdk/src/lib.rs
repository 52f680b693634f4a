//! cyxla guest SDK (being written).
#![no_std]
