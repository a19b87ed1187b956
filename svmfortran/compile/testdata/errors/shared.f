C     Shared data that cannot be allocated.
      SUBROUTINE S(D, N)
      INTEGER N, M
      PARAMETER (M = 4)
      REAL D(N), E(M), F(M), G(M), H(*), Q(:)
      EQUIVALENCE (E, F)
      SAVE G
CSVM$ SHARED:: D                           ! ERROR "D is a dummy argument"
CSVM$ SHARED:: E                           ! ERROR "E is in an EQUIVALENCE"
CSVM$ SHARED:: G                           ! ERROR "G is SAVEd"
CSVM$ SHARED:: M                           ! ERROR "M is a PARAMETER"
CSVM$ SHARED:: Q                           ! ERROR "Q has no explicit shape"
      END
