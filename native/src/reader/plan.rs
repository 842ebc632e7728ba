//! Planning the GETs of a vectored read: ranges coalesced across small holes, large ones
//! split.
