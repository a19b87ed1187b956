C     The paper's Figure 4: an exclusive region with a coordinated call,
C     a replicated region and a barrier.
      PROGRAM DISPATCH
      INTEGER I
CSVM$ EXCLUSIVE_REGION
      I = 1
      PRINT *, 'master only', I
      CALL SUB
      I = 2
CSVM$ REPLICATED_REGION
      CALL OTHER
CSVM$ REPLICATED_REGION_END
CSVM$ BARRIER
      CALL EXTERN(I)
CSVM$ EXCLUSIVE_REGION_END
      END

      SUBROUTINE SUB
      END

      SUBROUTINE OTHER
      END
